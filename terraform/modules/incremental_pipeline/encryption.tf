# Keys created where the environment brings none (var.encryption.create_keys),
# and the Glue security configuration. Key policies name the job roles by ARN
# (aws:PrincipalArn), built from the names this module gives them.
locals {
  created_keys = !var.encryption.create_keys ? {} : merge(
    length(var.data_kms_key_arns) > 0 ? {} : { data = "the lake and the objects and bookmarks Glue writes" },
    var.watermarks_kms_key_arn != null ? {} : { table = "the watermarks table" },
    var.scripts_bucket_kms_key_arn != null ? {} : { scripts = "the scripts bucket (scripts, library, temp files)" },
  )
  job_role_names = { for k in keys(var.pipelines) : k => "glue-${local.job_names[k]}" }
  job_role_arns  = sort([for name in values(local.job_role_names) : "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:role/${name}"])

  data_key_arns   = contains(keys(local.created_keys), "data") ? [module.key["data"].arn] : var.data_kms_key_arns
  table_key_arn   = contains(keys(local.created_keys), "table") ? module.key["table"].arn : var.watermarks_kms_key_arn
  scripts_key_arn = contains(keys(local.created_keys), "scripts") ? module.key["scripts"].arn : var.scripts_bucket_kms_key_arn
  logs_key_arn    = var.encryption.log_kms_key_arn != null ? var.encryption.log_kms_key_arn : try(module.logs_key[0].arn, null)

  # What every job role may use: its data, its table, its scripts (logs are
  # encrypted by CloudWatch Logs itself, under the logs key's service grant).
  job_kms_key_arns = distinct(concat(compact([local.scripts_key_arn, local.table_key_arn]), local.data_key_arns))

  security_configuration_name = var.encryption.security_configuration.create ? aws_glue_security_configuration.this[0].name : var.encryption.security_configuration.name
}

module "key" {
  source   = "../kms_key"
  for_each = local.created_keys

  name        = "${var.name_prefix}-${each.key}"
  description = "Encrypts ${each.value} of ${var.name_prefix}."
  # The scripts key's users include the roles that alone write code (scripts_writer_role_arns):
  # an upload to an SSE-KMS bucket is encrypted as its caller, who needs kms:GenerateDataKey
  # on the bucket's key (https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html).
  user_role_arns = distinct(concat(
    local.job_role_arns,
    var.encryption.key_users[each.key],
    each.key == "scripts" ? var.scripts_writer_role_arns : [],
    # The on-call reads the table, the analysts the targets and their query results
    # (operators.tf); without these the keys refuse them whatever their roles allow.
    local.operator_key_users[each.key],
  ))
  admin_role_arns = var.key_admin_role_arns
  tags            = var.tags
}

module "logs_key" {
  source = "../kms_key"
  count  = var.encryption.create_keys && var.encryption.log_kms_key_arn == null ? 1 : 0

  name            = "${var.name_prefix}-logs"
  admin_role_arns = var.key_admin_role_arns
  description     = "Encrypts the log groups of ${var.name_prefix}: its Glue jobs' and its dependents' state machine's."
  # CloudWatch Logs checks the key when it creates the log group: each log group given this
  # key must match one pattern here, or CreateLogGroup is refused ("The specified KMS key does
  # not exist or is not allowed to be used with Arn ...";
  # https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html).
  # The glue_job log groups are /aws-glue/jobs/<job>/..., glue_event_chain's is
  # /aws/vendedlogs/states/<prefix>-start-dependents.
  service_users = [{
    service            = "logs.${data.aws_region.current.name}.amazonaws.com"
    condition_operator = "ArnLike"
    condition_key      = "kms:EncryptionContext:aws:logs:arn"
    condition_values = [
      for group in ["/aws-glue/jobs/${var.name_prefix}-*", "/aws/vendedlogs/states/${var.name_prefix}-*"] :
      "arn:${data.aws_partition.current.partition}:logs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:log-group:${group}"
    ]
  }]
  tags = var.tags
}

data "aws_partition" "current" {}

resource "aws_glue_security_configuration" "this" {
  #checkov:skip=CKV_AWS_99:CloudWatch encryption is off here because the jobs' log groups are created encrypted with the logs key (glue_job log_kms_key_arn); S3 and bookmarks are encrypted.
  count = var.encryption.security_configuration.create ? 1 : 0

  name = "${var.name_prefix}-jobs"

  encryption_configuration {
    # The jobs' log groups are created encrypted with the logs key (glue_job's
    # log_kms_key_arn); Glue's own CloudWatch encryption would log elsewhere.
    cloudwatch_encryption {
      cloudwatch_encryption_mode = "DISABLED"
    }

    job_bookmarks_encryption {
      job_bookmarks_encryption_mode = "CSE-KMS"
      kms_key_arn                   = try(local.data_key_arns[0], null)
    }

    s3_encryption {
      s3_encryption_mode = "SSE-KMS"
      kms_key_arn        = try(local.data_key_arns[0], null)
    }
  }

  lifecycle {
    precondition {
      condition     = length(local.data_key_arns) > 0
      error_message = "a Glue security configuration needs a data key: set encryption.create_keys or data_kms_key_arns."
    }
  }
}
