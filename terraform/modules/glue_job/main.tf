data "aws_partition" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  state_name = coalesce(var.watermark_name, var.name)
  role_name  = coalesce(var.role_name, "glue-${var.name}")

  # Glue 5 writes to <prefix>/error and <prefix>/output when given a custom
  # prefix; a per-job prefix is what lets the role's log permissions name
  # this job's groups instead of every /aws-glue/jobs/* group.
  log_group_prefix = "/aws-glue/jobs/${var.name}"
  log_group_names  = { error = "${local.log_group_prefix}/error", output = "${local.log_group_prefix}/output" }

  default_arguments = merge(
    {
      "--job-language"           = "python"
      "--job-bookmark-option"    = "job-bookmark-${var.bookmark_option}"
      "--TempDir"                = var.temp_dir
      "--extra-py-files"         = join(",", concat([var.library_location], var.extra_py_files))
      "--custom-logGroup-prefix" = local.log_group_prefix
    },
    var.jdbc_credentials.secret_arn == null ? {} : {
      "--source_secret_id" = var.jdbc_credentials.secret_arn
    },
    # With a secret, the connection is only the network path (the job refuses
    # both credential sources at once).
    length(var.jdbc_credentials.connection_names) == 1 && var.jdbc_credentials.secret_arn == null ? {
      "--connection_name" = var.jdbc_credentials.connection_names[0]
    } : {},
    # Spark UI event logs under the job's own temp prefix, which the role
    # already may write (write_locations includes temp_dir).
    var.spark_ui_enabled ? {
      "--enable-spark-ui"       = "true"
      "--spark-event-logs-path" = "${trimsuffix(var.temp_dir, "/")}/spark-ui/"
    } : {},
    var.auto_scaling_enabled ? { "--enable-auto-scaling" = "true" } : {},
    var.enable_glue_metrics ? {
      "--enable-metrics"               = "true"
      "--enable-observability-metrics" = "true"
      "--enable-job-insights"          = "true"
    } : {},
    var.iceberg_target == null ? {} : {
      "--datalake-formats" = "iceberg"
      "--target_format"    = "iceberg"
      "--target_table"     = "${var.iceberg_target.database}.${var.iceberg_target.table}"
      # Glue takes one --conf argument; further settings ride in its value.
      "--conf" = join(" --conf ", [
        "spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.glue_catalog=org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.glue_catalog.catalog-impl=org.apache.iceberg.aws.glue.GlueCatalog",
        "spark.sql.catalog.glue_catalog.io-impl=org.apache.iceberg.aws.s3.S3FileIO",
        "spark.sql.catalog.glue_catalog.glue.id=${var.iceberg_target.account_id}",
        "spark.sql.catalog.glue_catalog.warehouse=${var.iceberg_target.warehouse}",
      ])
    },
    var.catalog_table == null ? {} : {
      "--catalog_table" = "${var.catalog_table.database}.${var.catalog_table.table}"
    },
  )

  # Exactly the target table and the two side tables the job creates beside it
  # (<table>__delivery for the tie rule, <table>__tombstone for deleted keys not back: see
  # docs/iceberg.md), and their database and catalog, which Glue also authorises.
  iceberg_statements = var.iceberg_target == null ? [] : [
    {
      Sid    = "IcebergTargetTable"
      Effect = "Allow"
      Action = ["glue:GetDatabase", "glue:GetTable", "glue:CreateTable", "glue:UpdateTable"]
      Resource = [
        "arn:${local.partition}:glue:${var.iceberg_target.region}:${var.iceberg_target.account_id}:catalog",
        "arn:${local.partition}:glue:${var.iceberg_target.region}:${var.iceberg_target.account_id}:database/${var.iceberg_target.database}",
        "arn:${local.partition}:glue:${var.iceberg_target.region}:${var.iceberg_target.account_id}:table/${var.iceberg_target.database}/${var.iceberg_target.table}",
        "arn:${local.partition}:glue:${var.iceberg_target.region}:${var.iceberg_target.account_id}:table/${var.iceberg_target.database}/${var.iceberg_target.table}__delivery",
        "arn:${local.partition}:glue:${var.iceberg_target.region}:${var.iceberg_target.account_id}:table/${var.iceberg_target.database}/${var.iceberg_target.table}__tombstone",
      ]
    },
  ]

  # A Parquet target's catalog table: the job adds new or widened columns to it
  # (GetTable, then UpdateTable only on a difference); nothing else in the catalog.
  catalog_table_statements = var.catalog_table == null ? [] : [
    {
      Sid    = "ParquetTargetCatalogTable"
      Effect = "Allow"
      Action = ["glue:GetTable", "glue:UpdateTable"]
      Resource = [
        "arn:${local.partition}:glue:${var.catalog_table.region}:${var.catalog_table.account_id}:catalog",
        "arn:${local.partition}:glue:${var.catalog_table.region}:${var.catalog_table.account_id}:database/${var.catalog_table.database}",
        "arn:${local.partition}:glue:${var.catalog_table.region}:${var.catalog_table.account_id}:table/${var.catalog_table.database}/${var.catalog_table.table}",
      ]
    },
  ]

  # Run-time overrides of these would point a run at another job's state,
  # let two runs hold leases of different lengths, or send the run metrics to
  # a namespace the role may not publish to (a committed run would then fail
  # to report, and the alarms would watch an empty metric).
  non_overridable_arguments = {
    "--watermarks_table"  = var.watermarks_table_name
    "--watermark_name"    = local.state_name
    "--lease_seconds"     = tostring(var.lease_seconds)
    "--metrics_namespace" = var.metrics_namespace
  }

  # Region and account of the job's own resources, from the table it is given.
  table_arn_parts = regex("^arn:[^:]+:dynamodb:([^:]+):([0-9]{12}):", var.watermarks_table_arn)
  connection_arns = [
    for name in var.jdbc_credentials.connection_names :
    "arn:${local.partition}:glue:${local.table_arn_parts[0]}:${local.table_arn_parts[1]}:connection/${name}"
  ]
  catalog_arn = "arn:${local.partition}:glue:${local.table_arn_parts[0]}:${local.table_arn_parts[1]}:catalog"
  ec2_arn     = "arn:${local.partition}:ec2:${local.table_arn_parts[0]}:${local.table_arn_parts[1]}"

  # A connection in a VPC: Glue creates, tags and deletes an elastic network
  # interface in the connection's subnet for every run, as the job's role
  # (https://docs.aws.amazon.com/glue/latest/dg/create-service-policy.html).
  # Describe* have no resource-level permissions; the rest name the subnets,
  # security groups and this account's interfaces, and tags only Glue's own key.
  vpc_statements = slice([
    {
      Sid    = "DescribeConnectionNetwork"
      Effect = "Allow"
      Action = [
        "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups",
        "ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeVpcEndpoints", "ec2:DescribeRouteTables",
      ]
      Resource = "*"
    },
    {
      Sid    = "CreateRunNetworkInterfaces"
      Effect = "Allow"
      Action = ["ec2:CreateNetworkInterface"]
      Resource = concat(
        [for id in try(var.vpc_network.subnet_ids, []) : "${local.ec2_arn}:subnet/${id}"],
        [for id in try(var.vpc_network.security_group_ids, []) : "${local.ec2_arn}:security-group/${id}"],
        ["${local.ec2_arn}:network-interface/*"],
      )
    },
    {
      # Glue puts a run's interfaces in the connection's subnet: any other interface of the
      # account (another environment's, another workload's) is not the job's to delete.
      # DeleteNetworkInterface carries ec2:Subnet (Service Authorization Reference, Amazon
      # EC2: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html).
      Sid       = "DeleteRunNetworkInterfaces"
      Effect    = "Allow"
      Action    = ["ec2:DeleteNetworkInterface"]
      Resource  = "${local.ec2_arn}:network-interface/*"
      Condition = { ArnEquals = { "ec2:Subnet" = [for id in try(var.vpc_network.subnet_ids, []) : "${local.ec2_arn}:subnet/${id}"] } }
    },
    {
      Sid      = "TagRunNetworkInterfaces"
      Effect   = "Allow"
      Action   = ["ec2:CreateTags", "ec2:DeleteTags"]
      Resource = "${local.ec2_arn}:network-interface/*"
      Condition = {
        "ForAllValues:StringEquals" = { "aws:TagKeys" = ["aws-glue-service-resource"] }
      }
    },
  ], 0, var.vpc_network == null ? 0 : 4)

  # s3://bucket[/prefix] -> {bucket, prefix}; the prefix loses its slashes at
  # either end so ARNs and s3:prefix conditions can be built uniformly.
  s3_uri_pattern = "^s3://([^/]+)/?(.*)$"
  script_object  = regex(local.s3_uri_pattern, var.script_location)
  library_object = regex(local.s3_uri_pattern, var.library_location)

  read_locations  = [for u in var.read_s3_uris : { bucket = regex(local.s3_uri_pattern, u)[0], prefix = trim(regex(local.s3_uri_pattern, u)[1], "/") }]
  write_locations = [for u in concat(var.write_s3_uris, [var.temp_dir]) : { bucket = regex(local.s3_uri_pattern, u)[0], prefix = trim(regex(local.s3_uri_pattern, u)[1], "/") }]

  read_object_arns  = [for l in local.read_locations : l.prefix == "" ? "arn:${local.partition}:s3:::${l.bucket}/*" : "arn:${local.partition}:s3:::${l.bucket}/${l.prefix}/*"]
  write_object_arns = [for l in local.write_locations : "arn:${local.partition}:s3:::${l.bucket}/${l.prefix}/*"]

  # ListBucket cannot be limited by object ARN, only by the s3:prefix key.
  list_prefixes_by_bucket = { for l in concat(local.read_locations, local.write_locations) : l.bucket => l.prefix... }

  list_statements = [
    for bucket, prefixes in local.list_prefixes_by_bucket : merge(
      {
        Sid      = "ListDataBucket${index(keys(local.list_prefixes_by_bucket), bucket)}"
        Effect   = "Allow"
        Action   = ["s3:ListBucket"]
        Resource = "arn:${local.partition}:s3:::${bucket}"
      },
      contains(prefixes, "") ? {} : {
        Condition = {
          StringLike = {
            "s3:prefix" = sort(distinct(flatten([for p in prefixes : [p, "${p}/*"]])))
          }
        }
      },
    )
  ]

  read_state_names = distinct(concat([local.state_name], var.upstream_state_names))

  policy_statements = concat(
    [
      {
        Sid    = "ReadOwnScriptAndLibrary"
        Effect = "Allow"
        Action = ["s3:GetObject"]
        Resource = [
          "arn:${local.partition}:s3:::${local.script_object[0]}/${local.script_object[1]}",
          "arn:${local.partition}:s3:::${local.library_object[0]}/${local.library_object[1]}",
        ]
      },
    ],
    length(var.extra_py_files) == 0 ? [] : [
      {
        Sid      = "ReadExtraPythonPackages"
        Effect   = "Allow"
        Action   = ["s3:GetObject"]
        Resource = [for u in var.extra_py_files : "arn:${local.partition}:s3:::${regex(local.s3_uri_pattern, u)[0]}/${regex(local.s3_uri_pattern, u)[1]}"]
      },
    ],
    length(local.read_object_arns) == 0 ? [] : [
      {
        Sid      = "ReadDataPrefixes"
        Effect   = "Allow"
        Action   = ["s3:GetObject"]
        Resource = local.read_object_arns
      },
    ],
    [
      {
        Sid      = "ReadWriteOwnPrefixes"
        Effect   = "Allow"
        Action   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]
        Resource = local.write_object_arns
      },
    ],
    local.list_statements,
    local.iceberg_statements,
    local.catalog_table_statements,
    [
      {
        # TransactWriteItems has no IAM action of its own: each Put, Update,
        # Delete and ConditionCheck in it is authorised as that action, so
        # the LeadingKeys condition covers transactional commits too.
        Sid      = "WriteOwnWatermarkItems"
        Effect   = "Allow"
        Action   = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]
        Resource = var.watermarks_table_arn
        Condition = {
          "ForAllValues:StringEquals" = { "dynamodb:LeadingKeys" = [local.state_name] }
        }
      },
      {
        Sid      = "ReadOwnAndUpstreamWatermarkItems"
        Effect   = "Allow"
        Action   = ["dynamodb:GetItem", "dynamodb:Query"]
        Resource = var.watermarks_table_arn
        Condition = {
          "ForAllValues:StringEquals" = { "dynamodb:LeadingKeys" = local.read_state_names }
        }
      },
      {
        # DescribeTable carries no key, so a LeadingKeys condition would be
        # vacuous here; it is granted on the table alone.
        Sid      = "DescribeWatermarksTable"
        Effect   = "Allow"
        Action   = ["dynamodb:DescribeTable"]
        Resource = var.watermarks_table_arn
      },
      {
        # PutMetricData has no resource-level permissions; the namespace
        # condition is the only available scope. `Glue` is where Glue's own
        # job and observability metrics go when they are enabled.
        Sid      = "PublishRunMetrics"
        Effect   = "Allow"
        Action   = ["cloudwatch:PutMetricData"]
        Resource = "*"
        Condition = {
          StringEquals = { "cloudwatch:namespace" = var.enable_glue_metrics ? [var.metrics_namespace, "Glue"] : [var.metrics_namespace] }
        }
      },
      {
        Sid      = "WriteOwnLogGroups"
        Effect   = "Allow"
        Action   = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]
        Resource = flatten([for g in aws_cloudwatch_log_group.this : [g.arn, "${g.arn}:log-stream:*"]])
      },
    ],
    var.jdbc_credentials.secret_arn == null ? [] : [
      {
        # Exactly the job's own secret: no wildcard, no other secret.
        Sid      = "ReadJdbcSecret"
        Effect   = "Allow"
        Action   = ["secretsmanager:GetSecretValue"]
        Resource = var.jdbc_credentials.secret_arn
      },
    ],
    length(local.connection_arns) == 0 ? [] : [
      {
        Sid      = "ReadOwnConnections"
        Effect   = "Allow"
        Action   = ["glue:GetConnection"]
        Resource = concat([local.catalog_arn], local.connection_arns)
      },
    ],
    local.vpc_statements,
    length(var.kms_key_arns) == 0 ? [] : [
      {
        Sid      = "UseDataKeys"
        Effect   = "Allow"
        Action   = ["kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"]
        Resource = var.kms_key_arns
      },
    ],
    # Job bookmarks under the security configuration's CSE-KMS are encrypted by Glue
    # as the job's role, which needs kms:Encrypt (and kms:Decrypt, granted above) on
    # that key (AWS Glue, "Setting up encryption in AWS Glue", step 2:
    # https://docs.aws.amazon.com/glue/latest/dg/set-up-encryption.html).
    var.bookmark_kms_key_arn == null || var.bookmark_option == "disable" ? [] : [
      {
        Sid      = "EncryptBookmarks"
        Effect   = "Allow"
        Action   = ["kms:Encrypt"]
        Resource = [var.bookmark_kms_key_arn]
      },
    ],
  )
}

resource "aws_cloudwatch_log_group" "this" {
  #checkov:skip=CKV_AWS_158:CloudWatch Logs encrypts at rest by default; a CMK is opt-in through var.log_kms_key_arn because its key policy must be written for the logs service of each region.
  for_each = local.log_group_names

  name              = each.value
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn
  tags              = var.tags
}

resource "aws_iam_role" "this" {
  name                 = local.role_name
  description          = "Runs Glue job ${var.name}: its own script, data prefixes, watermark items and logs only."
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags

  lifecycle {
    precondition {
      condition     = length(local.role_name) <= 64
      error_message = "role name ${local.role_name} is ${length(local.role_name)} characters; IAM allows 64 (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html): shorten the job name or set role_name."
    }
  }

  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Effect    = "Allow"
        Principal = { Service = "glue.amazonaws.com" }
        Action    = "sts:AssumeRole"
      },
    ]
  })
}

resource "aws_iam_role_policy" "this" {
  name = "least-privilege"
  role = aws_iam_role.this.id

  # jsonencode rather than aws_iam_policy_document keeps the document known
  # at plan time, which is what lets the module's tests assert on it.
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = local.policy_statements
  })

  lifecycle {
    precondition {
      condition     = var.bookmark_kms_key_arn == null || contains(var.kms_key_arns, coalesce(var.bookmark_kms_key_arn, "-"))
      error_message = "bookmark_kms_key_arn must be one of kms_key_arns (the role decrypts the bookmarks with it too)."
    }

    # jsonencode writes no whitespace, so its length is what IAM counts.
    precondition {
      condition     = length(jsonencode({ Version = "2012-10-17", Statement = local.policy_statements })) <= 10240
      error_message = "the role's inline policy exceeds 10,240 characters, the most IAM allows per role (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html): grant fewer, broader prefixes."
    }
  }
}

resource "aws_glue_job" "this" {
  #checkov:skip=CKV_AWS_195:Data at rest is encrypted by the buckets' and the table's own settings; a Glue security configuration (CMK for S3, logs and bookmarks) is opt-in through var.security_configuration.
  name                      = var.name
  description               = var.description
  role_arn                  = aws_iam_role.this.arn
  glue_version              = var.glue_version
  worker_type               = var.worker_type
  number_of_workers         = var.number_of_workers
  execution_class           = var.execution_class
  timeout                   = var.timeout
  max_retries               = var.max_retries
  security_configuration    = var.security_configuration
  job_run_queuing_enabled   = var.job_run_queuing_enabled
  default_arguments         = merge(local.default_arguments, var.default_arguments)
  non_overridable_arguments = local.non_overridable_arguments
  connections               = var.jdbc_credentials.connection_names
  tags                      = var.tags

  command {
    name            = "glueetl"
    script_location = var.script_location
    python_version  = "3"
  }

  execution_property {
    max_concurrent_runs = var.max_concurrent_runs
  }

  # A "Glue Job Run Status" event once a run is still going after this many minutes
  # (modules/job_alarms slow-run warning), before the timeout stops it.
  dynamic "notification_property" {
    for_each = var.notify_delay_after == null ? [] : [var.notify_delay_after]
    content {
      notify_delay_after = notification_property.value
    }
  }

  # A run that starts before its role can act fails on its first S3 read.
  depends_on = [aws_iam_role_policy.this, aws_cloudwatch_log_group.this]

  lifecycle {
    precondition {
      condition     = var.execution_class != "FLEX" || contains(["G.1X", "G.2X"], var.worker_type)
      error_message = "FLEX execution runs only on G.1X or G.2X workers (https://docs.aws.amazon.com/glue/latest/dg/add-job.html); got worker_type ${var.worker_type}."
    }

    precondition {
      condition     = length(jsonencode(merge(local.default_arguments, var.default_arguments, local.non_overridable_arguments))) <= 266240
      error_message = "the job's arguments exceed 260 KB, the most Glue accepts (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-programming-etl-glue-arguments.html)."
    }

    # Glue queues (WAITING) only STANDARD runs of jobs without retries; a FLEX
    # run waits for capacity on its own terms and a job with retries is not
    # queued, so an overlapping run would fail and page instead of waiting.
    precondition {
      condition     = !var.job_run_queuing_enabled || (var.max_retries == 0 && var.execution_class == "STANDARD")
      error_message = "job run queuing applies only to STANDARD jobs without retries (https://docs.aws.amazon.com/glue/latest/dg/job-run-statuses.html): set max_retries = 0 and execution_class = STANDARD, or job_run_queuing_enabled = false; got max_retries ${var.max_retries}, execution_class ${var.execution_class}."
    }
  }
}
