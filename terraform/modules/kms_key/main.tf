data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account_root = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"

  # The account administers the key but cannot use it: encrypting and
  # decrypting are granted to the listed roles and services only, so an
  # identity policy with kms:* elsewhere in the account does not reach the data.
  admin_actions = [
    "kms:Create*", "kms:Describe*", "kms:Enable*", "kms:List*", "kms:Put*", "kms:Update*",
    "kms:Revoke*", "kms:Disable*", "kms:Get*", "kms:Delete*", "kms:TagResource", "kms:UntagResource",
    "kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion", "kms:RotateKeyOnDemand",
  ]
  use_actions = ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*", "kms:DescribeKey"]

  statements = concat(
    [
      {
        Sid       = "AccountAdministersKey"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action    = local.admin_actions
        Resource  = "*"
      },
    ],
    # The roles by aws:PrincipalArn rather than as principals: KMS refuses a
    # policy naming a role that does not exist yet, and the roles' own
    # policies name this key, so they are created after it.
    length(var.user_role_arns) == 0 ? [] : [
      {
        Sid       = "RolesUseKey"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action    = local.use_actions
        Resource  = "*"
        Condition = { ArnEquals = { "aws:PrincipalArn" = sort(var.user_role_arns) } }
      },
    ],
    [
      for s in var.service_users : {
        Sid       = "ServiceUsesKey${index(var.service_users, s)}"
        Effect    = "Allow"
        Principal = { Service = s.service }
        Action    = local.use_actions
        Resource  = "*"
        Condition = { (s.condition_operator) = { (s.condition_key) = s.condition_values } }
      }
    ],
  )
}

resource "aws_kms_key" "this" {
  description             = var.description
  enable_key_rotation     = true
  deletion_window_in_days = var.deletion_window_in_days
  tags                    = var.tags

  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = local.statements
  })
}

resource "aws_kms_alias" "this" {
  name          = "alias/${var.name}"
  target_key_id = aws_kms_key.this.key_id
}
