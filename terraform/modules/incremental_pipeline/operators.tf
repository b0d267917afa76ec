# The people around the jobs: the on-call engineer (the runbook's `status`, `runs`, `logs`,
# `target`, `watermarks show` and `watermarks rewind`, a Parquet target's restore and an
# Iceberg target's rollback included)
# and the analysts querying the targets through the Athena
# workgroup. Each is a role people assume (sts:AssumeRole from the account, e.g. an IAM
# Identity Center permission set allowed to assume it), named glue-<prefix>--<who>: the
# double hyphen keeps them apart from job roles (glue-<job>, a pipeline name never starts
# with a hyphen) while the CI deploy role's ManageJobRoles (glue-<prefix>-*) covers them.
# Their key grants are in encryption.tf (operator_key_users). Every statement below is used
# by a call evaluated in tests/iam/test_iam_evaluation.py.
locals {
  account_root      = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"
  oncall_role_name  = "glue-${var.name_prefix}--oncall"
  analyst_role_name = "glue-${var.name_prefix}--analyst"
  oncall_role_arn   = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:role/${local.oncall_role_name}"
  analyst_role_arn  = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:role/${local.analyst_role_name}"
  # People assume the operator roles from the account (an IAM Identity Center permission set).
  operator_trust_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Principal = { AWS = local.account_root }, Action = "sts:AssumeRole" }]
  })
  # The on-call reads and restores the targets (data key) and may read the local runner's
  # run records beside the scripts (scripts key); the analysts read targets and results.
  analyst_key_users  = var.athena_workgroup_enabled ? [local.analyst_role_arn] : []
  operator_key_users = { data = concat([local.oncall_role_arn], local.analyst_key_users), table = [local.oncall_role_arn], scripts = concat([local.oncall_role_arn], local.analyst_key_users) }

  arn_prefix = "arn:${data.aws_partition.current.partition}"
  region     = data.aws_region.current.name
  account    = data.aws_caller_identity.current.account_id

  # s3://bucket/prefix/ of every target, by bucket: what Athena reads as the analyst.
  target_locations = [for k, path in local.target_paths : regex("^s3://(?P<bucket>[^/]+)/(?P<prefix>.*)$", path)]
  target_buckets   = distinct([for l in local.target_locations : l.bucket])
  # The on-call's writes differ by format: a Parquet restore copies and deletes files, an
  # Iceberg rollback only writes one new metadata file.
  parquet_target_locations = [for k, path in local.target_paths : regex("^s3://(?P<bucket>[^/]+)/(?P<prefix>.*)$", path) if !contains(keys(local.iceberg_targets), k)]
  iceberg_target_locations = { for k in sort(keys(local.iceberg_targets)) : k => regex("^s3://(?P<bucket>[^/]+)/(?P<prefix>.*)$", local.target_paths[k]) }

  oncall_statements = concat([
    {
      # `watermarks show` and `status` read the current items, `rewind` the run's pointer
      # and history item, and `slots` queries a job's state items.
      Sid      = "ReadWatermarks"
      Effect   = "Allow"
      Action   = ["dynamodb:GetItem", "dynamodb:Query"]
      Resource = module.watermarks_table.arn
    },
    {
      # `watermarks rewind` commits the rewound state as a new version: one transaction
      # putting the history item and updating the current one (IAM authorizes each item
      # of TransactWriteItems by its own action; there is no TransactWriteItems action:
      # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
      Sid      = "RewindWatermarks"
      Effect   = "Allow"
      Action   = ["dynamodb:PutItem", "dynamodb:UpdateItem"]
      Resource = module.watermarks_table.arn
    },
    {
      # `status`: each job's last run. By the environment's job-name prefix, not job by
      # job: adding a pipeline changes no shared resource (every job is <prefix>-<pipeline>).
      # `runs` and `logs` also read the job (GetJob: its script's bucket and its log group).
      Sid      = "ReadJobRuns"
      Effect   = "Allow"
      Action   = ["glue:GetJobRuns", "glue:GetJob"]
      Resource = "${local.arn_prefix}:glue:${local.region}:${local.account}:job/${var.name_prefix}-*"
    },
    {
      # `status`: rows and lag of a run that left no summary. GetMetricStatistics has no
      # resource type (Service Authorization Reference, Amazon CloudWatch).
      Sid      = "ReadRunMetrics"
      Effect   = "Allow"
      Action   = ["cloudwatch:GetMetricStatistics"]
      Resource = "*"
    },
    {
      # `status`: the alarm states of every job.
      Sid      = "ReadAlarmStates"
      Effect   = "Allow"
      Action   = ["cloudwatch:DescribeAlarms"]
      Resource = "${local.arn_prefix}:cloudwatch:${local.region}:${local.account}:alarm:${var.name_prefix}-*"
    },
    {
      # `logs` and `runs` (a run's run_summary line): the jobs' log groups
      # (<prefix>/output, <prefix>/error, glue_job's /aws-glue/jobs/<job>). FilterLogEvents
      # is authorized on the log group; reading a group encrypted with the logs key needs
      # no kms grant of the caller, CloudWatch Logs decrypts under its own ("Encrypt log
      # data in CloudWatch Logs using AWS KMS",
      # https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html).
      Sid      = "ReadRunLogs"
      Effect   = "Allow"
      Action   = ["logs:FilterLogEvents"]
      Resource = "${local.arn_prefix}:logs:${local.region}:${local.account}:log-group:/aws-glue/jobs/${var.name_prefix}-*"
    },
    {
      # `runs` and `logs` look for the local runner's record of a run first
      # (s3://<scripts bucket>/runs/<job>/<run id>.json|.log; none exists in an account,
      # and a refusal is read as none): the listing of runs/ only (s3:prefix, "Amazon S3
      # condition key examples",
      # https://docs.aws.amazon.com/AmazonS3/latest/userguide/amazon-s3-policy-keys.html).
      Sid       = "ListRunRecords"
      Effect    = "Allow"
      Action    = ["s3:ListBucket"]
      Resource  = module.scripts_bucket.bucket_arn
      Condition = { StringLike = { "s3:prefix" = ["runs/${var.name_prefix}-*"] } }
    },
    {
      Sid      = "ReadRunRecords"
      Effect   = "Allow"
      Action   = ["s3:GetObject"]
      Resource = "${module.scripts_bucket.bucket_arn}/runs/${var.name_prefix}-*"
    },
    {
      # `target` lists a Parquet target's files (boto3) and `watermarks rewind` lists what
      # it restores: under the targets' prefixes only.
      Sid       = "ListTargets"
      Effect    = "Allow"
      Action    = ["s3:ListBucket"]
      Resource  = [for b in local.target_buckets : "${local.arn_prefix}:s3:::${b}"]
      Condition = { StringLike = { "s3:prefix" = [for l in local.target_locations : "${l.prefix}*"] } }
    },
    ], length(local.parquet_target_locations) == 0 ? [] : [
    {
      # `target` reads a Parquet target's published files (pyarrow: HeadObject and ranged
      # GetObject); `watermarks rewind` restores its retained files: CopyObject needs
      # s3:GetObject on the source and s3:PutObject on the destination, both under the
      # target ("CopyObject", https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html),
      # then deletes the replaced files and its records (DeleteObject, and DeleteObjects,
      # authorized per object: "DeleteObjects",
      # https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html).
      Sid      = "ReadAndRestoreParquetTargets"
      Effect   = "Allow"
      Action   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
      Resource = [for l in local.parquet_target_locations : "${local.arn_prefix}:s3:::${l.bucket}/${l.prefix}*"]
    },
    ], length(local.iceberg_targets) == 0 ? [] : [
    {
      # `target` and `watermarks rewind` of an Iceberg target go through pyiceberg's Glue
      # catalog (glue_incremental_tools.iceberg_catalog): loading the table is GetTable; the
      # rollback commits new metadata (GetTable again, GetDatabase to tell an S3 Tables
      # database apart, then UpdateTable with the read VersionId); Glue authorizes each on
      # the catalog, the database and the table ("Specifying AWS Glue resource ARNs",
      # https://docs.aws.amazon.com/glue/latest/dg/glue-specifying-resource-arns.html).
      # The metadata and data files are under the target's prefix (ListTargets,
      # ReadIcebergTargets, CommitIcebergTargetMetadata, the data key through S3). Exactly the Iceberg targets' tables:
      # not their __delivery/__tombstone side tables, which no command rolls back.
      Sid    = "ReadAndRollBackIcebergTargets"
      Effect = "Allow"
      Action = ["glue:GetDatabase", "glue:GetTable", "glue:UpdateTable"]
      Resource = concat(
        [
          "${local.arn_prefix}:glue:${local.region}:${local.account}:catalog",
          "${local.arn_prefix}:glue:${local.region}:${local.account}:database/${local.database_name}",
        ],
        [for k in sort(keys(local.iceberg_targets)) : "${local.arn_prefix}:glue:${local.region}:${local.account}:table/${local.database_name}/${local.target_tables[k]}"],
      )
    },
    {
      # An Iceberg target is read whole (metadata, manifests, data files: GetObject; pyarrow's
      # HeadObject is authorized as s3:GetObject), and a rollback writes exactly one object:
      # the new metadata file, <table location>/metadata/<n>-<uuid>.metadata.json. The table
      # location is Iceberg's Glue catalog default, <warehouse>/<database>.db/<table> (the
      # database has no LocationUri; GlueCatalog.defaultWarehouseLocation), the warehouse
      # being the target path (glue_job iceberg_target). No DeleteObject: a rollback removes
      # no file, and a data file a snapshot still references must never go.
      Sid      = "ReadIcebergTargets"
      Effect   = "Allow"
      Action   = ["s3:GetObject"]
      Resource = [for k, l in local.iceberg_target_locations : "${local.arn_prefix}:s3:::${l.bucket}/${l.prefix}*"]
    },
    {
      Sid      = "CommitIcebergTargetMetadata"
      Effect   = "Allow"
      Action   = ["s3:PutObject"]
      Resource = [for k, l in local.iceberg_target_locations : "${local.arn_prefix}:s3:::${l.bucket}/${l.prefix}${local.database_name}.db/${local.target_tables[k]}/metadata/*.metadata.json"]
    },
    ], var.oncall_state == null ? [] : [
    {
      # `status --env`, `watermarks --env` and `target --env` read the environment's outputs
      # from its state, as `terraform output` does, after `terraform init`: both ask the S3
      # backend for the workspaces, a ListObjectsV2 under the workspace key prefix, `env:/`
      # unless <env>.backend.hcl sets workspace_key_prefix (it does not): "Other workspaces
      # are stored using the path <workspace_key_prefix>/<workspace_name>/<key>. The default
      # workspace key prefix is env:" (https://developer.hashicorp.com/terraform/language/backend/s3);
      # refused under the default prefix, Terraform (since 1.7: hashicorp/terraform#34511,
      # fixing https://github.com/hashicorp/terraform/issues/34223) logs it and carries on
      # with the default workspace alone, so the grant is for a listing that works and
      # finds every workspace, not to keep init from failing. Then one GetObject
      # of the default workspace's key (below); no lock: output takes none. The listing is
      # granted for exactly that prefix: it names the other workspaces' keys, no content.
      Sid       = "ListEnvironmentState"
      Effect    = "Allow"
      Action    = ["s3:ListBucket"]
      Resource  = "${local.arn_prefix}:s3:::${var.oncall_state.bucket}"
      Condition = { StringEquals = { "s3:prefix" = ["env:/"] } }
    },
    ], var.oncall_state == null ? [] : [
    {
      Sid      = "ReadEnvironmentState"
      Effect   = "Allow"
      Action   = ["s3:GetObject"]
      Resource = "${local.arn_prefix}:s3:::${var.oncall_state.bucket}/${var.oncall_state.key}"
    },
    ], try(var.oncall_state.kms_key_arn, null) == null ? [] : [
    {
      # A state bucket encrypted with a customer managed key: S3 decrypts as the caller
      # ("Using server-side encryption with AWS KMS keys",
      # https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html#require-sse-kms).
      # That key's policy is the platform team's (docs/bootstrap.md step 1): it must name
      # the on-call role too.
      Sid       = "DecryptEnvironmentStateThroughS3"
      Effect    = "Allow"
      Action    = ["kms:Decrypt"]
      Resource  = [var.oncall_state.kms_key_arn]
      Condition = { StringEquals = { "kms:ViaService" = "s3.${local.region}.amazonaws.com" } }
    },
    ], !local.data_key_known ? [] : [
    {
      # The targets are SSE-KMS with the data key (the Glue security configuration): a read
      # decrypts, a copy decrypts its source and encrypts its copy (kms:Decrypt and
      # kms:GenerateDataKey, "Using server-side encryption with AWS KMS keys",
      # https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html#require-sse-kms).
      Sid       = "UseDataKeyThroughS3"
      Effect    = "Allow"
      Action    = ["kms:Decrypt", "kms:GenerateDataKey"]
      Resource  = local.data_key_arns
      Condition = { StringEquals = { "kms:ViaService" = "s3.${local.region}.amazonaws.com" } }
    },
    ], !local.scripts_key_known ? [] : [
    {
      # A run record's read, SSE-KMS with the scripts key.
      Sid       = "UseScriptsKeyThroughS3"
      Effect    = "Allow"
      Action    = ["kms:Decrypt"]
      Resource  = [local.scripts_key_arn]
      Condition = { StringEquals = { "kms:ViaService" = "s3.${local.region}.amazonaws.com" } }
    },
    ], !local.table_key_known ? [] : [
    {
      # The table's customer managed key, used by DynamoDB on the caller's behalf
      # ("How Amazon DynamoDB uses AWS KMS", authorizing use of your KMS key:
      # https://docs.aws.amazon.com/kms/latest/developerguide/services-dynamodb.html#dynamodb-authz).
      Sid       = "UseTableKeyThroughDynamoDB"
      Effect    = "Allow"
      Action    = ["kms:Decrypt"]
      Resource  = [local.table_key_arn]
      Condition = { StringEquals = { "kms:ViaService" = "dynamodb.${local.region}.amazonaws.com" } }
    },
  ])

  # What Athena does as the analyst ("Access to Amazon S3",
  # https://docs.aws.amazon.com/athena/latest/ug/s3-permissions.html; "Fine-grained access
  # to databases and tables in the AWS Glue Data Catalog",
  # https://docs.aws.amazon.com/athena/latest/ug/fine-grained-access-to-glue-resources.html;
  # "Encryption at rest", https://docs.aws.amazon.com/athena/latest/ug/encryption.html).
  # Whether a key exists, decided from the inputs (known at plan, unlike a new key's ARN);
  # an environment without customer managed keys (environments/local) gets no key grant.
  table_key_known    = contains(keys(local.created_keys), "table") || var.watermarks_kms_key_arn != null
  data_key_known     = contains(keys(local.created_keys), "data") || length(var.data_kms_key_arns) > 0
  scripts_key_known  = contains(keys(local.created_keys), "scripts") || var.scripts_bucket_kms_key_arn != null
  analyst_keys_known = length(local.created_keys) > 0 || length(var.data_kms_key_arns) > 0 || var.scripts_bucket_kms_key_arn != null
  analyst_keys       = distinct(compact(concat(local.data_key_arns, [local.scripts_key_arn])))
  analyst_statements = concat([
    {
      Sid      = "QueryInWorkgroup"
      Effect   = "Allow"
      Action   = ["athena:GetWorkGroup", "athena:StartQueryExecution", "athena:GetQueryExecution", "athena:GetQueryResults", "athena:StopQueryExecution"]
      Resource = "${local.arn_prefix}:athena:${local.region}:${local.account}:workgroup/${var.name_prefix}-analysts"
    },
    {
      Sid    = "ReadCatalog"
      Effect = "Allow"
      Action = ["glue:GetDatabase", "glue:GetTable", "glue:GetTables", "glue:GetPartitions"]
      Resource = [
        "${local.arn_prefix}:glue:${local.region}:${local.account}:catalog",
        "${local.arn_prefix}:glue:${local.region}:${local.account}:database/${local.database_name}",
        "${local.arn_prefix}:glue:${local.region}:${local.account}:table/${local.database_name}/*",
      ]
    },
    {
      Sid      = "LocateTargetBuckets"
      Effect   = "Allow"
      Action   = ["s3:GetBucketLocation", "s3:ListBucket"]
      Resource = [for b in local.target_buckets : "${local.arn_prefix}:s3:::${b}"]
    },
    {
      Sid      = "ReadTargets"
      Effect   = "Allow"
      Action   = ["s3:GetObject"]
      Resource = [for l in local.target_locations : "${local.arn_prefix}:s3:::${l.bucket}/${l.prefix}*"]
    },
    {
      # The workgroup's result location (enforced by the workgroup): Athena writes and
      # reads the results there as the caller.
      Sid      = "WriteQueryResults"
      Effect   = "Allow"
      Action   = ["s3:PutObject", "s3:GetObject", "s3:AbortMultipartUpload"]
      Resource = "${module.scripts_bucket.bucket_arn}/athena/*"
    },
    {
      Sid      = "LocateResultBucket"
      Effect   = "Allow"
      Action   = ["s3:GetBucketLocation", "s3:ListBucket"]
      Resource = module.scripts_bucket.bucket_arn
    },
    ], !local.analyst_keys_known ? [] : [
    {
      # Targets are SSE-KMS with the data key (the Glue security configuration), results
      # with the scripts key (the workgroup's SSE_KMS): both through S3 only.
      Sid       = "UseDataAndResultKeysThroughS3"
      Effect    = "Allow"
      Action    = ["kms:Decrypt", "kms:GenerateDataKey"]
      Resource  = local.analyst_keys
      Condition = { StringEquals = { "kms:ViaService" = "s3.${local.region}.amazonaws.com" } }
    },
  ])
}

resource "aws_iam_role" "oncall" {
  name                 = local.oncall_role_name
  description          = "On-call for ${var.name_prefix}: status, runs, logs, target, watermarks show/history/rewind."
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags

  assume_role_policy = local.operator_trust_policy
}

resource "aws_iam_role_policy" "oncall" {
  name   = "oncall"
  role   = aws_iam_role.oncall.id
  policy = jsonencode({ Version = "2012-10-17", Statement = local.oncall_statements })
}

resource "aws_iam_role" "analyst" {
  count = var.athena_workgroup_enabled ? 1 : 0

  name                 = local.analyst_role_name
  description          = "Analysts of ${var.name_prefix}: queries the targets through workgroup ${var.name_prefix}-analysts."
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags

  assume_role_policy = local.operator_trust_policy
}

resource "aws_iam_role_policy" "analyst" {
  count = var.athena_workgroup_enabled ? 1 : 0

  name   = "analyst"
  role   = aws_iam_role.analyst[0].id
  policy = jsonencode({ Version = "2012-10-17", Statement = local.analyst_statements })
}
