mock_provider "aws" {
  source = "../../testing/aws"
}

variables {
  name           = "gi-test-data"
  description    = "Encrypts the lake."
  user_role_arns = ["arn:aws:iam::123456789012:role/glue-gi-test-orders", "arn:aws:iam::123456789012:role/glue-gi-test-customers"]
  service_users = [{
    service            = "logs.eu-west-1.amazonaws.com"
    condition_operator = "ArnLike"
    condition_key      = "kms:EncryptionContext:aws:logs:arn"
    condition_values   = ["arn:aws:logs:eu-west-1:123456789012:log-group:/aws-glue/jobs/gi-test-*"]
  }]
}

run "exactly_the_listed_roles_and_services_use_the_key" {

  assert {
    condition     = toset(one([for s in jsondecode(aws_kms_key.this.policy).Statement : s.Condition.ArnEquals["aws:PrincipalArn"] if s.Sid == "RolesUseKey"])) == toset(var.user_role_arns)
    error_message = "Only the listed roles may use the key."
  }

  assert {
    condition     = !anytrue([for a in one([for s in jsondecode(aws_kms_key.this.policy).Statement : s.Action if s.Sid == "AccountAdministersKey"]) : contains(["kms:Decrypt", "kms:Encrypt", "kms:*"], a) || startswith(a, "kms:GenerateDataKey")])
    error_message = "The account administers the key but may not encrypt or decrypt with it."
  }

  assert {
    condition = alltrue([for s in jsondecode(aws_kms_key.this.policy).Statement : alltrue([
      for a in flatten([s.Action]) : !strcontains(a, "*") && (a != "kms:CreateGrant" || try(s.Condition.Bool["kms:GrantIsForAWSResource"], "") == "true")
    ]) if try(s.Principal.AWS, "") != "" && s.Sid != "RolesUseKey"])
    error_message = "The account's statements name each action (kms:Create* would include CreateGrant, and a grant can give Decrypt): CreateGrant only for an AWS service's own resource (kms:GrantIsForAWSResource)."
  }

  assert {
    condition     = one([for s in jsondecode(aws_kms_key.this.policy).Statement : s.Condition.ArnLike["kms:EncryptionContext:aws:logs:arn"] if s.Sid == "ServiceUsesKey0"]) == ["arn:aws:logs:eu-west-1:123456789012:log-group:/aws-glue/jobs/gi-test-*"]
    error_message = "A service uses the key only under its condition."
  }

  assert {
    condition     = aws_kms_key.this.enable_key_rotation && aws_kms_alias.this.name == "alias/gi-test-data"
    error_message = "The key rotates and is aliased by name."
  }
}

run "rejects_a_wildcard_role" {
  command = plan

  variables {
    user_role_arns = ["*"]
  }

  expect_failures = [var.user_role_arns]
}
