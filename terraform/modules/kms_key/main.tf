data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  account_root = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"

  # The account administers the key but cannot use it: encrypting and decrypting are
  # granted to the listed roles and services only, and no wildcard hides a use: kms:Create*
  # would include kms:CreateGrant, and a grant can give Decrypt to anyone, so an identity
  # policy with kms:* could reach the data through a grant it made itself. Each
  # administrative action is named (AWS KMS permissions reference:
  # https://docs.aws.amazon.com/kms/latest/developerguide/kms-api-permissions-reference.html).
  # kms:PutKeyPolicy stays: whoever administers a key can rewrite its policy (the key policy
  # lockout safety check needs one such principal); that act is in CloudTrail, unlike a use.
  admin_actions = [
    "kms:CreateAlias", "kms:UpdateAlias", "kms:DeleteAlias", "kms:DescribeKey", "kms:EnableKey", "kms:DisableKey",
    "kms:EnableKeyRotation", "kms:DisableKeyRotation", "kms:RotateKeyOnDemand", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus",
    "kms:ListGrants", "kms:ListKeyPolicies", "kms:ListKeyRotations", "kms:ListResourceTags", "kms:PutKeyPolicy",
    "kms:UpdateKeyDescription", "kms:RevokeGrant", "kms:TagResource", "kms:UntagResource", "kms:ScheduleKeyDeletion",
    "kms:CancelKeyDeletion",
  ]
  # A grant only when an AWS service creates it for a resource of its own (DynamoDB's table
  # key at CreateTable/UpdateTable): kms:GrantIsForAWSResource is true only then
  # (https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html#conditions-kms-grant-is-for-aws-resource).
  service_grant_actions = ["kms:CreateGrant"]
  # What the role that applies (the CI deploy role) does to a key it manages, granted here by
  # name rather than in its identity policy: an identity grant on key/* scoped by the
  # Environment tag reaches any untagged key of the account once the role tags it (it must
  # hold kms:TagResource on "*" to tag a key it creates). Naming the role as the principal
  # lets this policy alone allow it ("You can use the key policy alone to control access":
  # https://docs.aws.amazon.com/kms/latest/developerguide/control-access.html), so the
  # deploy role administers the platform's keys and no other. KMS checks at CreateKey and
  # PutKeyPolicy that the caller may still PutKeyPolicy (the lockout safety check):
  # https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateKey.html.
  deployer_actions = [
    "kms:EnableKeyRotation", "kms:PutKeyPolicy", "kms:TagResource", "kms:UntagResource", "kms:UpdateKeyDescription",
    "kms:ScheduleKeyDeletion", "kms:CreateAlias", "kms:DeleteAlias",
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
      {
        Sid       = "AccountLetsAwsServicesUseKeyForItsResources"
        Effect    = "Allow"
        Principal = { AWS = local.account_root }
        Action    = local.service_grant_actions
        Resource  = "*"
        Condition = { Bool = { "kms:GrantIsForAWSResource" = "true" } }
      },
    ],
    # The deploy role exists before any key (terraform/ci creates it), so it is a principal.
    length(var.admin_role_arns) == 0 ? [] : [
      {
        Sid       = "DeployRoleAdministersKey"
        Effect    = "Allow"
        Principal = { AWS = sort(var.admin_role_arns) }
        Action    = local.deployer_actions
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
