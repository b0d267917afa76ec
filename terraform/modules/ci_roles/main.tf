data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  partition = data.aws_partition.current.partition
  account   = data.aws_caller_identity.current.account_id
  region    = data.aws_region.current.name
  issuer    = "token.actions.githubusercontent.com"
  provider  = var.oidc_provider_arn != null ? var.oidc_provider_arn : aws_iam_openid_connect_provider.github[0].arn
  prefix    = var.name_prefix

  # Who may assume each role: the `sub` claim GitHub puts in the job's token.
  subjects = {
    pull_request = "repo:${var.github_repository}:pull_request"
    plan         = "repo:${var.github_repository}:ref:refs/heads/main"
    deploy       = "repo:${var.github_repository}:environment:${var.github_environment}"
    publish      = "repo:${var.github_repository}:environment:${var.github_environment}"
  }

  state_object   = "arn:${local.partition}:s3:::${var.state.bucket}/${var.state.key}"
  scripts_bucket = "arn:${local.partition}:s3:::${var.scripts_bucket_name}"

  # What a plan reads: the state, and every resource type the root manages
  # (Describe/Get/List carry no resource-level scoping for most of them).
  read_statements = concat(local.notification_read_statements, [
    {
      Sid      = "ReadState"
      Effect   = "Allow"
      Action   = ["s3:GetObject"]
      Resource = [local.state_object]
    },
    {
      # init, plan and apply ask the S3 backend for the workspaces: a ListObjectsV2 under the
      # workspace key prefix, `env:/` by default (the backend files set no
      # workspace_key_prefix; "State Storage",
      # https://developer.hashicorp.com/terraform/language/backend/s3). Refused under the
      # default prefix, Terraform >= 1.7 logs it and sees the default workspace only
      # (https://github.com/hashicorp/terraform/pull/34511); granted so the listing works
      # (terraform workspace list, a non-default workspace found), not to keep init alive.
      # The lock file is read and written by name (HoldStateLock), never listed.
      Sid       = "ListState"
      Effect    = "Allow"
      Action    = ["s3:ListBucket"]
      Resource  = "arn:${local.partition}:s3:::${var.state.bucket}"
      Condition = { StringEquals = { "s3:prefix" = ["env:/"] } }
    },
    {
      Sid    = "ReadPlatform"
      Effect = "Allow"
      Action = [
        # Named Glue reads, not glue:Get*: that would include GetConnection, which returns
        # a JDBC connection's password, to a role that runs pull-request code.
        "glue:GetJob", "glue:GetTrigger", "glue:GetWorkflow", "glue:GetDatabase", "glue:GetTable", "glue:GetPartitionIndexes",
        "glue:GetSecurityConfiguration", "glue:GetTags", "glue:ListJobs", "glue:ListTriggers", "dynamodb:Describe*", "dynamodb:ListTagsOfResource",
        "iam:GetRole", "iam:GetRolePolicy", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies", "iam:GetOpenIDConnectProvider",
        "sns:GetTopicAttributes", "sns:GetSubscriptionAttributes", "sns:ListTagsForResource", "sns:ListSubscriptionsByTopic",
        "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ListQueueTags",
        "cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource", "cloudwatch:GetDashboard",
        "events:DescribeRule", "events:ListTargetsByRule", "events:ListTagsForResource",
        "states:DescribeStateMachine", "states:ListStateMachineVersions", "states:ListTagsForResource",
        "logs:DescribeLogGroups", "logs:ListTagsForResource", "logs:ListTagsLogGroup",
        "kms:DescribeKey", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus", "kms:ListAliases", "kms:ListResourceTags",
        "athena:GetWorkGroup", "athena:ListTagsForResource", "sts:GetCallerIdentity",
        # modules/glue_network (JDBC pipelines' VPC path) and the state machine's log delivery.
        "ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups", "ec2:DescribeSecurityGroupRules",
        "ec2:DescribeVpcEndpoints", "ec2:DescribePrefixLists", "ec2:DescribeRouteTables", "ec2:DescribeNetworkInterfaces",
        "logs:GetLogDelivery", "logs:ListLogDeliveries",
      ]
      Resource = "*"
    },
    {
      # The environment's scripts bucket only: s3:ListBucket on "*" would list the keys of
      # every bucket in the account (the lake's included) and s3:GetBucket* read every
      # bucket's policy, to a role that runs pull-request code. A plan refreshes this bucket
      # alone (HeadBucket is authorized as s3:ListBucket: "HeadBucket",
      # https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html).
      Sid    = "ReadScriptsBucketConfiguration"
      Effect = "Allow"
      Action = [
        "s3:GetBucket*", "s3:GetLifecycleConfiguration", "s3:GetEncryptionConfiguration", "s3:GetAccelerateConfiguration",
        "s3:GetReplicationConfiguration", "s3:GetObjectLockConfiguration", "s3:GetBucketObjectLockConfiguration", "s3:ListBucket",
      ]
      Resource = [local.scripts_bucket]
    },
    {
      # Provider >= 5.67 validates a changed state machine definition at plan
      # (modules/glue_event_chain): read-only, it changes nothing.
      # https://docs.aws.amazon.com/step-functions/latest/apireference/API_ValidateStateMachineDefinition.html
      # It names no resource type (Service Authorization Reference, AWS Step Functions):
      # a stateMachine ARN never matches it, so Resource is "*".
      Sid      = "ValidateStateMachineDefinitions"
      Effect   = "Allow"
      Action   = ["states:ValidateStateMachineDefinition"]
      Resource = "*"
    },
  ])

  # Source buckets whose pipelines set source.notifications (modules/s3_notifications): the
  # apply writes each bucket's notification configuration (PutBucketNotificationConfiguration
  # is authorized as s3:PutBucketNotification, its read as s3:GetBucketNotification:
  # https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketNotificationConfiguration.html).
  # These buckets are the data team's, not named by the environment's prefix, so they are
  # listed (notification_source_buckets); no other action on them.
  notification_buckets = [for b in sort(var.notification_source_buckets) : "arn:${local.partition}:s3:::${b}"]
  notification_read_statements = length(local.notification_buckets) == 0 ? [] : [
    {
      Sid      = "ReadSourceNotifications"
      Effect   = "Allow"
      Action   = ["s3:GetBucketNotification"]
      Resource = local.notification_buckets
    },
  ]
  notification_write_statements = length(local.notification_buckets) == 0 ? [] : [
    {
      Sid      = "ConfigureSourceNotifications"
      Effect   = "Allow"
      Action   = ["s3:PutBucketNotification"]
      Resource = local.notification_buckets
    },
  ]

  # The plan roles only (the deploy role manages connections by name, ManageJobsTriggersCatalog):
  # a plan refreshes modules/glue_network's NETWORK connections (GetConnection, authorized on
  # the catalog and the connection), which hold no credentials and say so by their tag. A
  # JDBC connection with a password carries no such tag and stays unreadable.
  connection_read_statements = [
    {
      Sid       = "ReadCredentialFreeConnections"
      Effect    = "Allow"
      Action    = ["glue:GetConnection"]
      Resource  = [for arn in local.named.glue : arn if strcontains(arn, ":connection/")]
      Condition = { StringEquals = { "aws:ResourceTag/glue-incremental:credentials" = "none" } }
    },
    {
      Sid      = "GetConnectionsInTheCatalog"
      Effect   = "Allow"
      Action   = ["glue:GetConnection"]
      Resource = [local.named.catalog[0]]
    },
  ]

  # A plan on main writes the S3-native lock file and nothing else.
  lock_statement = {
    Sid      = "HoldStateLock"
    Effect   = "Allow"
    Action   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    Resource = ["${local.state_object}.tflock"]
  }

  named = {
    glue = [
      for kind in ["job", "trigger", "workflow", "connection"] :
      "arn:${local.partition}:glue:${local.region}:${local.account}:${kind}/${local.prefix}-*"
    ]
    catalog = [
      "arn:${local.partition}:glue:${local.region}:${local.account}:catalog",
      "arn:${local.partition}:glue:${local.region}:${local.account}:database/${replace(local.prefix, "-", "_")}",
      "arn:${local.partition}:glue:${local.region}:${local.account}:table/${replace(local.prefix, "-", "_")}/*",
    ]
    roles = "arn:${local.partition}:iam::${local.account}:role/glue-${local.prefix}-*"
    # modules/glue_network's own resources (EC2 names them by id, never by our names).
    network = [for kind in ["security-group", "security-group-rule", "vpc-endpoint"] : "arn:${local.partition}:ec2:${local.region}:${local.account}:${kind}/*"]
  }

  # Apply and deploy: write only what the environment's names cover.
  deploy_statements = concat(local.read_statements, [
    local.lock_statement,
    {
      Sid      = "WriteState"
      Effect   = "Allow"
      Action   = ["s3:PutObject"]
      Resource = [local.state_object]
    },
    {
      Sid      = "ManageJobsTriggersCatalog"
      Effect   = "Allow"
      Action   = ["glue:*"]
      Resource = concat(local.named.glue, slice(local.named.catalog, 1, 3))
    },
    {
      # The account's root catalog is named with every database, table and connection
      # action, but glue:* on it would also allow the account-wide ones that name it alone:
      # PutResourcePolicy, DeleteResourcePolicy, PutDataCatalogEncryptionSettings,
      # ImportCatalogToGlue, UpdateCatalog, DeleteCatalog (Service Authorization Reference,
      # AWS Glue, resource type rootcatalog:
      # https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsglue.html),
      # which reach the other environment's catalog in a shared account.
      Sid      = "NameTheRootCatalog"
      Effect   = "Allow"
      Action   = ["glue:*Database*", "glue:*Table*", "glue:*Partition*", "glue:*Connection*"]
      Resource = [local.named.catalog[0]]
    },
    {
      # iam:PermissionsBoundary is carried by CreateRole, DeleteRole, UpdateRole,
      # PutRolePolicy, DeleteRolePolicy and PutRolePermissionsBoundary only (Service
      # Authorization Reference, IAM:
      # https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsidentityandaccessmanagementiam.html).
      Sid      = "ManageJobRoles"
      Effect   = "Allow"
      Action   = ["iam:CreateRole", "iam:DeleteRole", "iam:UpdateRole", "iam:PutRolePolicy", "iam:DeleteRolePolicy", "iam:PutRolePermissionsBoundary"]
      Resource = local.named.roles
      Condition = var.permissions_boundary_arn == null ? null : {
        StringEquals = { "iam:PermissionsBoundary" = var.permissions_boundary_arn }
      }
    },
    {
      # TagRole and UntagRole never carry iam:PermissionsBoundary: under ManageJobRoles'
      # condition they would be refused whenever a boundary is set, and with them every
      # CreateRole carrying tags, which needs iam:TagRole too ("Tagging IAM resources":
      # https://docs.aws.amazon.com/IAM/latest/UserGuide/id_tags.html).
      Sid      = "TagJobRoles"
      Effect   = "Allow"
      Action   = ["iam:TagRole", "iam:UntagRole"]
      Resource = local.named.roles
    },
    {
      Sid       = "PassJobRolesToGlue"
      Effect    = "Allow"
      Action    = ["iam:PassRole"]
      Resource  = local.named.roles
      Condition = { StringEquals = { "iam:PassedToService" = "glue.amazonaws.com" } }
    },
    {
      Sid      = "ManageWatermarksTable"
      Effect   = "Allow"
      Action   = ["dynamodb:CreateTable", "dynamodb:UpdateTable", "dynamodb:DeleteTable", "dynamodb:TagResource", "dynamodb:UntagResource", "dynamodb:UpdateContinuousBackups", "dynamodb:UpdateTimeToLive"]
      Resource = "arn:${local.partition}:dynamodb:${local.region}:${local.account}:table/${var.watermarks_table_name}"
    },
    {
      # The bucket's configuration, each write modules/scripts_bucket's resources make and
      # no object action: releases are published by the publish role, never by the role that
      # can change the policy, lifecycle and versioning that keep them immutable
      # (docs/releases.md). Object Lock and ACLs are not managed here: not allowed.
      Sid    = "ManageScriptsBucket"
      Effect = "Allow"
      Action = [
        "s3:CreateBucket", "s3:DeleteBucket", "s3:PutBucketTagging", "s3:PutBucketOwnershipControls", "s3:PutBucketPublicAccessBlock",
        "s3:PutBucketVersioning", "s3:PutEncryptionConfiguration", "s3:PutLifecycleConfiguration", "s3:PutBucketPolicy", "s3:DeleteBucketPolicy",
      ]
      Resource = [local.scripts_bucket]
    },
    {
      Sid    = "ManagePagingAndAlarms"
      Effect = "Allow"
      Action = ["sns:*", "sqs:*", "cloudwatch:PutMetricAlarm", "cloudwatch:DeleteAlarms", "cloudwatch:TagResource", "cloudwatch:PutDashboard", "cloudwatch:DeleteDashboards", "events:*", "logs:CreateLogGroup", "logs:DeleteLogGroup", "logs:PutRetentionPolicy", "logs:AssociateKmsKey", "logs:TagResource", "logs:TagLogGroup"]
      Resource = [
        "arn:${local.partition}:sns:${local.region}:${local.account}:${local.prefix}-*",
        "arn:${local.partition}:sqs:${local.region}:${local.account}:${local.prefix}-*",
        "arn:${local.partition}:cloudwatch:${local.region}:${local.account}:alarm:${local.prefix}-*",
        "arn:${local.partition}:cloudwatch::${local.account}:dashboard/${local.prefix}*",
        "arn:${local.partition}:events:${local.region}:${local.account}:rule/${local.prefix}-*",
        "arn:${local.partition}:logs:${local.region}:${local.account}:log-group:/aws-glue/jobs/${local.prefix}-*",
        # modules/glue_event_chain: the state machine's log group.
        "arn:${local.partition}:logs:${local.region}:${local.account}:log-group:/aws/vendedlogs/states/${local.prefix}-*",
      ]
    },
    {
      # Creating a state machine with logging sets up a log delivery as the caller; these
      # actions take no resource scoping (https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html).
      Sid    = "DeliverStateMachineLogs"
      Effect = "Allow"
      Action = [
        "logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery", "logs:DeleteLogDelivery", "logs:ListLogDeliveries",
        "logs:PutResourcePolicy", "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
      ]
      Resource = "*"
    },
    # modules/glue_network: a JDBC network's security group, its rules and the VPC endpoints
    # the VPC lacks, scoped by the Environment tag the provider's default_tags put on each:
    # created only carrying this environment's (aws:RequestTag), changed or deleted only
    # when they carry it (aws:ResourceTag), tagged outside a create only then too. EC2
    # authorizes a create on the VPC, subnet and route tables it lands in as well, which
    # are the network team's and carry no tag of ours: those are named by account and
    # region only. (Service Authorization Reference, Amazon EC2:
    # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html;
    # tag on create needs ec2:CreateTags with ec2:CreateAction:
    # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html)
    # Each create on the kind of resource it makes only: the request's tags say nothing
    # about an existing security group a rule or an endpoint is added to, so on
    # security-group/* aws:RequestTag would let any request tagged with this environment
    # open another environment's (or the network team's) group. The existing group is
    # ManageOwnJdbcNetworkResources' (aws:ResourceTag).
    {
      Sid       = "CreateJdbcSecurityGroups"
      Effect    = "Allow"
      Action    = ["ec2:CreateSecurityGroup"]
      Resource  = ["arn:${local.partition}:ec2:${local.region}:${local.account}:security-group/*"]
      Condition = { StringEquals = { "aws:RequestTag/Environment" = var.environment } }
    },
    {
      Sid       = "CreateJdbcVpcEndpoints"
      Effect    = "Allow"
      Action    = ["ec2:CreateVpcEndpoint"]
      Resource  = ["arn:${local.partition}:ec2:${local.region}:${local.account}:vpc-endpoint/*"]
      Condition = { StringEquals = { "aws:RequestTag/Environment" = var.environment } }
    },
    {
      Sid       = "CreateJdbcSecurityGroupRules"
      Effect    = "Allow"
      Action    = ["ec2:AuthorizeSecurityGroupIngress", "ec2:AuthorizeSecurityGroupEgress"]
      Resource  = ["arn:${local.partition}:ec2:${local.region}:${local.account}:security-group-rule/*"]
      Condition = { StringEquals = { "aws:RequestTag/Environment" = var.environment } }
    },
    {
      Sid       = "TagJdbcNetworkResourcesOnCreate"
      Effect    = "Allow"
      Action    = ["ec2:CreateTags"]
      Resource  = local.named.network
      Condition = { StringEquals = { "aws:RequestTag/Environment" = var.environment, "ec2:CreateAction" = ["CreateSecurityGroup", "CreateVpcEndpoint", "AuthorizeSecurityGroupIngress", "AuthorizeSecurityGroupEgress"] } }
    },
    {
      Sid    = "ManageOwnJdbcNetworkResources"
      Effect = "Allow"
      Action = [
        "ec2:DeleteSecurityGroup", "ec2:AuthorizeSecurityGroupIngress", "ec2:AuthorizeSecurityGroupEgress",
        "ec2:RevokeSecurityGroupIngress", "ec2:RevokeSecurityGroupEgress", "ec2:ModifySecurityGroupRules",
        "ec2:UpdateSecurityGroupRuleDescriptionsIngress", "ec2:UpdateSecurityGroupRuleDescriptionsEgress",
        "ec2:CreateVpcEndpoint", "ec2:ModifyVpcEndpoint", "ec2:DeleteVpcEndpoints", "ec2:CreateTags", "ec2:DeleteTags",
      ]
      Resource  = local.named.network
      Condition = { StringEquals = { "aws:ResourceTag/Environment" = var.environment } }
    },
    {
      Sid      = "CreateInTheNetworkTeamsVpcs"
      Effect   = "Allow"
      Action   = ["ec2:CreateSecurityGroup", "ec2:CreateVpcEndpoint"]
      Resource = [for kind in ["vpc", "subnet", "route-table"] : "arn:${local.partition}:ec2:${local.region}:${local.account}:${kind}/*"]
    },
    {
      # CreateKey is authorized on "*" and the key it makes has no alias yet, so
      # kms:ResourceAliases cannot scope it (KMS "Using aliases to control access to
      # KMS keys": https://docs.aws.amazon.com/kms/latest/developerguide/alias-authorization.html).
      # The request's tags can: the provider's default_tags put Environment on every
      # key (aws:RequestTag, https://docs.aws.amazon.com/kms/latest/developerguide/tag-authorization.html);
      # tagging on create needs kms:TagResource in an IAM policy, on "*" (the key does not
      # exist yet: "Controlling access to tags",
      # https://docs.aws.amazon.com/kms/latest/developerguide/tag-permissions.html).
      # A key that exists must carry this environment's tag already (IfExists: a key being
      # created has none). An existing key with no Environment tag can still be tagged
      # (no request condition tells it from a key being created): that is all it gives,
      # since no statement here administers a key by its tag. Administration (rotation,
      # policy, alias, deletion) is in each platform key's own policy, which names this
      # role (modules/kms_key admin_role_arns, modules/oncall key_admin_role_arns).
      Sid      = "CreateEnvironmentKeys"
      Effect   = "Allow"
      Action   = ["kms:CreateKey", "kms:TagResource"]
      Resource = "*"
      Condition = {
        StringEquals         = { "aws:RequestTag/Environment" = var.environment }
        StringEqualsIfExists = { "aws:ResourceTag/Environment" = var.environment }
      }
    },
    {
      # CreateAlias and DeleteAlias need the action on the alias here and on the key in its
      # policy (https://docs.aws.amazon.com/kms/latest/developerguide/alias-access.html).
      Sid      = "NameEnvironmentKeys"
      Effect   = "Allow"
      Action   = ["kms:CreateAlias", "kms:DeleteAlias"]
      Resource = ["arn:${local.partition}:kms:${local.region}:${local.account}:alias/${local.prefix}-*"]
    },
    {
      # CreateTable and UpdateTable with a customer managed key: DynamoDB checks that the
      # caller may describe the key and create the grant DynamoDB uses it through
      # (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/encryption.usagenotes.html).
      Sid      = "LetDynamoDBUseTheTableKey"
      Effect   = "Allow"
      Action   = ["kms:CreateGrant"]
      Resource = "arn:${local.partition}:kms:${local.region}:${local.account}:key/*"
      Condition = {
        StringEquals = { "aws:ResourceTag/Environment" = var.environment, "kms:ViaService" = "dynamodb.${local.region}.amazonaws.com" }
        Bool         = { "kms:GrantIsForAWSResource" = "true" }
      }
    },
    {
      # A Glue security configuration has no ARN: its actions take Resource "*"
      # ("Specifying AWS Glue resource ARNs": https://docs.aws.amazon.com/glue/latest/dg/glue-specifying-resource-arns.html).
      Sid      = "ManageSecurityConfigurations"
      Effect   = "Allow"
      Action   = ["glue:CreateSecurityConfiguration", "glue:DeleteSecurityConfiguration"]
      Resource = "*"
    },
    {
      Sid      = "ManageAthenaWorkgroup"
      Effect   = "Allow"
      Action   = ["athena:CreateWorkGroup", "athena:UpdateWorkGroup", "athena:DeleteWorkGroup", "athena:TagResource"]
      Resource = "arn:${local.partition}:athena:${local.region}:${local.account}:workgroup/${local.prefix}*"
    },
    # modules/glue_event_chain: the state machine starting dependents, and its two roles
    # (named glue-<prefix>-*, so ManageJobRoles covers them) passed to Step Functions and EventBridge.
    {
      Sid      = "ManageStartDependentsStateMachine"
      Effect   = "Allow"
      Action   = ["states:CreateStateMachine", "states:UpdateStateMachine", "states:DeleteStateMachine", "states:TagResource", "states:UntagResource", "states:DescribeStateMachine", "states:ListStateMachineVersions", "states:ListTagsForResource"]
      Resource = "arn:${local.partition}:states:${local.region}:${local.account}:stateMachine:${local.prefix}-*"
    },
    {
      Sid       = "PassOrchestrationRoles"
      Effect    = "Allow"
      Action    = ["iam:PassRole"]
      Resource  = local.named.roles
      Condition = { StringEquals = { "iam:PassedToService" = ["states.amazonaws.com", "events.amazonaws.com"] } }
    },
  ])

  # deploy and deploy switch: the release's objects, the jobs it moves, nothing of the
  # bucket's configuration (docs/releases.md, "Who publishes").
  publish_statements = [
    local.read_statements[0],
    local.read_statements[1],
    {
      # HeadBucket (s3:ListBucket), then each release file: GetObject to skip one already
      # published with the same bytes, PutObject with If-None-Match.
      Sid      = "FindTheScriptsBucket"
      Effect   = "Allow"
      Action   = ["s3:ListBucket"]
      Resource = [local.scripts_bucket]
    },
    {
      Sid      = "PublishReleases"
      Effect   = "Allow"
      Action   = ["s3:GetObject", "s3:PutObject"]
      Resource = ["${local.scripts_bucket}/releases/*"]
    },
    {
      # deploy's uploads to the SSE-KMS scripts bucket: S3 asks KMS for a data key as the
      # caller (https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html#require-sse-kms);
      # the scripts key's policy names the publish role too (incremental_pipeline scripts_writer_role_arns).
      Sid       = "EncryptUploadsThroughS3"
      Effect    = "Allow"
      Action    = ["kms:GenerateDataKey", "kms:Decrypt"]
      Resource  = "arn:${local.partition}:kms:${local.region}:${local.account}:key/*"
      Condition = { StringEquals = { "aws:ResourceTag/Environment" = var.environment, "kms:ViaService" = "s3.${local.region}.amazonaws.com" } }
    },
    {
      # deploy verifies each job's release (GetJob); deploy switch moves one (UpdateJob,
      # which passes the job's own role again: iam:PassRole).
      Sid      = "SwitchJobs"
      Effect   = "Allow"
      Action   = ["glue:GetJob", "glue:UpdateJob"]
      Resource = ["arn:${local.partition}:glue:${local.region}:${local.account}:job/${local.prefix}-*"]
    },
    {
      Sid       = "PassJobRolesOnSwitch"
      Effect    = "Allow"
      Action    = ["iam:PassRole"]
      Resource  = local.named.roles
      Condition = { StringEquals = { "iam:PassedToService" = "glue.amazonaws.com" } }
    },
  ]

  roles = merge(
    var.pull_request_plan_role ? {
      # One per environment, reading that environment's state only: the workflow plans
      # each environment of a pull request with its own (AWS_PR_PLAN_ROLE_ARN_<ENV>), in
      # one account or one account per environment alike.
      pull_request = { name = "gi-ci-${var.environment}-pull-request-plan", statements = concat(local.read_statements, local.connection_read_statements), description = "Plans ${var.environment} for pull requests (read only, no state lock)." }
    } : {},
    {
      plan    = { name = "gi-ci-${var.environment}-plan", statements = concat(local.read_statements, local.connection_read_statements, [local.lock_statement]), description = "Plans ${var.environment} on main (read, and the state lock)." }
      deploy  = { name = "gi-ci-${var.environment}-deploy", statements = concat(local.deploy_statements, local.notification_write_statements), description = "Applies ${var.environment}'s reviewed plan (GitHub environment ${var.github_environment}); publishes nothing." }
      publish = { name = "gi-ci-${var.environment}-publish", statements = local.publish_statements, description = "Publishes ${var.environment}'s releases and switches its jobs (GitHub environment ${var.github_environment}); changes no bucket configuration." }
    },
  )
}

resource "aws_iam_openid_connect_provider" "github" {
  count = var.oidc_provider_arn == null ? 1 : 0

  url            = "https://${local.issuer}"
  client_id_list = ["sts.amazonaws.com"]
  tags           = var.tags
}

resource "aws_iam_role" "this" {
  for_each = local.roles

  name                 = each.value.name
  description          = each.value.description
  max_session_duration = 3600
  permissions_boundary = var.permissions_boundary_arn
  tags                 = var.tags

  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Effect    = "Allow"
        Principal = { Federated = local.provider }
        Action    = "sts:AssumeRoleWithWebIdentity"
        Condition = {
          StringEquals = {
            "${local.issuer}:aud" = "sts.amazonaws.com"
            "${local.issuer}:sub" = local.subjects[each.key]
          }
        }
      },
    ]
  })
}

resource "aws_iam_role_policy" "this" {
  for_each = local.roles

  name = "least-privilege"
  role = aws_iam_role.this[each.key].id
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [for st in each.value.statements : { for k, v in st : k => v if v != null }]
  })
}
