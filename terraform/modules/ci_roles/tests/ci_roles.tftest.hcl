mock_provider "aws" {
  source = "../../testing/aws"
}

variables {
  github_repository      = "example/glue-incremental"
  environment            = "prod"
  github_environment     = "production"
  pull_request_plan_role = true
  name_prefix            = "gi-prod"
  state                  = { bucket = "example-terraform-state-prod", key = "glue-incremental/prod/terraform.tfstate" }
  scripts_bucket_name    = "example-gi-prod-scripts"
}

run "each_role_trusts_exactly_its_workflow_subject" {
  assert {
    condition = {
      for k, r in aws_iam_role.this : k => jsondecode(r.assume_role_policy).Statement[0].Condition.StringEquals["token.actions.githubusercontent.com:sub"]
      } == {
      pull_request = "repo:example/glue-incremental:pull_request"
      plan         = "repo:example/glue-incremental:ref:refs/heads/main"
      deploy       = "repo:example/glue-incremental:environment:production"
      publish      = "repo:example/glue-incremental:environment:production"
    }
    error_message = "Pull requests, main and the production environment must each assume only their own role."
  }

  assert {
    condition     = alltrue([for r in aws_iam_role.this : jsondecode(r.assume_role_policy).Statement[0].Condition.StringEquals["token.actions.githubusercontent.com:aud"] == "sts.amazonaws.com"])
    error_message = "Every role must require the sts.amazonaws.com audience."
  }

  assert {
    condition     = length(aws_iam_openid_connect_provider.github) == 1 && aws_iam_openid_connect_provider.github[0].url == "https://token.actions.githubusercontent.com"
    error_message = "Without oidc_provider_arn the module creates the GitHub OIDC provider."
  }
}

run "plan_roles_write_nothing_but_the_lock" {
  command = plan

  assert {
    condition = alltrue(flatten([for st in jsondecode(aws_iam_role_policy.this["pull_request"].policy).Statement : [
      for a in flatten([st.Action]) : can(regex("^[a-z0-9]+:(Get|List|Describe|ValidateStateMachineDefinition)", a))
    ]]))
    error_message = "The pull-request plan role may only read (no lock: it plans with -lock=false)."
  }

  assert {
    condition = alltrue(flatten([for st in jsondecode(aws_iam_role_policy.this["pull_request"].policy).Statement : [
      for a in flatten([st.Action]) : !contains(["glue:Get*", "glue:*", "glue:GetConnections", "secretsmanager:GetSecretValue"], a) && (
        # GetConnection only of credential-free (tagged) connections, or on the catalog alone.
        a != "glue:GetConnection" || try(st.Condition.StringEquals["aws:ResourceTag/glue-incremental:credentials"], "") == "none" || alltrue([for r in flatten([st.Resource]) : endswith(r, ":catalog")])
      )
    ]]))
    error_message = "The pull-request plan role runs pull-request code: it must not read a Glue connection's password (only connections tagged credential-free) or a secret."
  }

  assert {
    condition     = aws_iam_role.this["pull_request"].name == "gi-ci-prod-pull-request-plan"
    error_message = "Each environment has its own pull-request plan role, reading that environment's state only."
  }

  assert {
    condition = alltrue([for st in jsondecode(aws_iam_role_policy.this["plan"].policy).Statement :
      alltrue([for a in flatten([st.Action]) : can(regex("^[a-z0-9]+:(Get|List|Describe|ValidateStateMachineDefinition)", a))]) ||
    flatten([st.Resource]) == ["arn:aws:s3:::example-terraform-state-prod/glue-incremental/prod/terraform.tfstate.tflock"]])
    error_message = "The main plan role may write only the state lock."
  }
}

run "deploy_writes_only_the_environments_names" {
  command = plan

  assert {
    condition     = one([for st in jsondecode(aws_iam_role_policy.this["deploy"].policy).Statement : st.Resource if st.Sid == "ManageJobRoles"]) == "arn:aws:iam::123456789012:role/glue-gi-prod-*"
    error_message = "The deploy role may manage only the environment's job roles."
  }

  assert {
    condition     = one([for st in jsondecode(aws_iam_role_policy.this["deploy"].policy).Statement : st.Condition.StringEquals["iam:PassedToService"] if st.Sid == "PassJobRolesToGlue"]) == "glue.amazonaws.com"
    error_message = "The deploy role may pass the job roles to Glue only."
  }

  assert {
    condition = alltrue([for st in jsondecode(aws_iam_role_policy.this["deploy"].policy).Statement :
    flatten([st.Resource]) != ["*"] || alltrue([for a in flatten([st.Action]) : can(regex("^[a-z0-9]+:(Get|List|Describe|ValidateStateMachineDefinition)", a))]) || (st.Sid == "CreateEnvironmentKeys" && try(st.Condition.StringEquals["aws:RequestTag/Environment"], "") == "prod") || contains(["ManageSecurityConfigurations", "DeliverStateMachineLogs"], st.Sid)])
    error_message = "Every write of the deploy role names the environment's resources (CreateKey, unscopable, is conditioned on the environment's tag; Glue security configurations have no ARN; Step Functions' log-delivery actions take no resource)."
  }
}

run "only_the_publish_role_writes_releases_and_it_changes_no_bucket_configuration" {
  command = plan

  assert {
    condition = !anytrue(flatten([for st in jsondecode(aws_iam_role_policy.this["deploy"].policy).Statement : [
      for a in flatten([st.Action]) : contains(["s3:PutObject", "s3:Put*", "s3:*", "s3:DeleteObject"], a) && anytrue([for r in flatten([st.Resource]) : strcontains(r, "example-gi-prod-scripts")])
    ]]))
    error_message = "The deploy role (which writes the scripts bucket's policy) must write no object: releases are the publish role's."
  }

  assert {
    condition = alltrue(flatten([for st in jsondecode(aws_iam_role_policy.this["publish"].policy).Statement : [
      for a in flatten([st.Action]) : !startswith(a, "s3:Put") || (a == "s3:PutObject" && flatten([st.Resource]) == ["arn:aws:s3:::example-gi-prod-scripts/releases/*"])
    ]]))
    error_message = "The publish role may put objects under releases/ only, and no bucket configuration."
  }
}

run "an_existing_oidc_provider_is_reused" {
  command = plan

  variables {
    oidc_provider_arn = "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"
  }

  assert {
    condition     = length(aws_iam_openid_connect_provider.github) == 0 && output.oidc_provider_arn == "arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com"
    error_message = "With oidc_provider_arn no provider is created and the roles trust the given one."
  }
}

run "deploy_passes_the_orchestration_roles_only_to_step_functions_and_eventbridge" {
  command = plan

  assert {
    condition     = one([for st in jsondecode(aws_iam_role_policy.this["deploy"].policy).Statement : st if st.Sid == "PassOrchestrationRoles"]).Condition.StringEquals["iam:PassedToService"] == ["states.amazonaws.com", "events.amazonaws.com"]
    error_message = "The glue_event_chain roles may be passed to Step Functions and EventBridge only."
  }

  assert {
    condition     = one([for st in jsondecode(aws_iam_role_policy.this["deploy"].policy).Statement : st.Resource if st.Sid == "ManageStartDependentsStateMachine"]) == "arn:aws:states:eu-west-1:123456789012:stateMachine:gi-prod-*"
    error_message = "The deploy role manages only the environment's state machines."
  }
}
