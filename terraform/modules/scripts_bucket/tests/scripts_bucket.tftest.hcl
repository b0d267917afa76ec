mock_provider "aws" {
  mock_resource "aws_s3_bucket" {
    defaults = { arn = "arn:aws:s3:::gi-scripts" }
  }
}

variables {
  bucket_name = "gi-scripts"
}

run "bucket_is_private_versioned_and_owner_enforced" {
  assert {
    condition = (aws_s3_bucket_public_access_block.this.block_public_acls && aws_s3_bucket_public_access_block.this.block_public_policy &&
    aws_s3_bucket_public_access_block.this.ignore_public_acls && aws_s3_bucket_public_access_block.this.restrict_public_buckets)
    error_message = "All four public access blocks must be on."
  }

  assert {
    condition     = aws_s3_bucket_ownership_controls.this.rule[0].object_ownership == "BucketOwnerEnforced"
    error_message = "ACLs must be disabled (BucketOwnerEnforced)."
  }

  assert {
    condition     = aws_s3_bucket_versioning.this.versioning_configuration[0].status == "Enabled"
    error_message = "Versioning must be on so a bad deploy can be rolled back."
  }

  assert {
    condition     = one(aws_s3_bucket_server_side_encryption_configuration.this.rule).apply_server_side_encryption_by_default[0].sse_algorithm == "AES256"
    error_message = "Without a KMS key the bucket must default to SSE-S3."
  }
}

run "denies_every_request_without_tls" {
  assert {
    condition = jsondecode(aws_s3_bucket_policy.this.policy).Statement[0] == {
      Sid       = "DenyInsecureTransport"
      Effect    = "Deny"
      Principal = "*"
      Action    = "s3:*"
      Resource  = ["arn:aws:s3:::gi-scripts", "arn:aws:s3:::gi-scripts/*"]
      Condition = { Bool = { "aws:SecureTransport" = "false" } }
    }
    error_message = "The bucket policy must deny all non-TLS requests."
  }
}

run "release_objects_are_written_once_and_never_deleted" {
  assert {
    condition = [for s in jsondecode(aws_s3_bucket_policy.this.policy).Statement : [s.Action, s.Resource, try(s.Condition, null)] if startswith(s.Sid, "Releases")] == [
      [["s3:PutObject"], ["arn:aws:s3:::gi-scripts/releases/*"], { Null = { "s3:if-none-match" = "true" } }],
      [["s3:DeleteObject", "s3:DeleteObjectVersion"], ["arn:aws:s3:::gi-scripts/releases/*"], null],
    ]
    error_message = "A PutObject under releases/ without If-None-Match, and any delete there, must be denied to everyone."
  }
}

run "temporary_files_and_old_versions_expire" {
  assert {
    condition     = one([for r in aws_s3_bucket_lifecycle_configuration.this.rule : r if r.id == "expire-tmp"]).filter[0].prefix == "tmp/" && one([for r in aws_s3_bucket_lifecycle_configuration.this.rule : r if r.id == "expire-tmp"]).expiration[0].days == 7
    error_message = "Objects under tmp/ must expire after tmp_expiration_days (7)."
  }

  assert {
    condition     = one([for r in aws_s3_bucket_lifecycle_configuration.this.rule : r if r.id == "expire-noncurrent-versions"]).noncurrent_version_expiration[0].noncurrent_days == 30
    error_message = "Noncurrent versions must expire after noncurrent_version_expiration_days (30)."
  }
}

run "uses_sse_kms_with_a_customer_key" {
  variables {
    kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = one(aws_s3_bucket_server_side_encryption_configuration.this.rule).apply_server_side_encryption_by_default[0].sse_algorithm == "aws:kms" && one(aws_s3_bucket_server_side_encryption_configuration.this.rule).bucket_key_enabled == true
    error_message = "With a KMS key the bucket must default to SSE-KMS with bucket keys."
  }
}

run "rejects_invalid_bucket_name" {
  command = plan

  variables {
    bucket_name = "Glue_Scripts"
  }

  expect_failures = [var.bucket_name]
}

run "only_the_deploy_role_writes_or_deletes_code" {
  variables {
    code_writer_role_arns = ["arn:aws:iam::123456789012:role/gi-ci-prod-deploy"]
  }

  assert {
    condition = one([for s in jsondecode(aws_s3_bucket_policy.this.policy).Statement : s if s.Sid == "OnlyTheDeployRoleWritesCode"]) == {
      Sid       = "OnlyTheDeployRoleWritesCode"
      Effect    = "Deny"
      Principal = "*"
      Action    = ["s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutObjectAcl", "s3:RestoreObject"]
      Resource  = ["arn:aws:s3:::gi-scripts/releases/*", "arn:aws:s3:::gi-scripts/scripts/*", "arn:aws:s3:::gi-scripts/lib/*", "arn:aws:s3:::gi-scripts/manifests/*"]
      Condition = { ArnNotEquals = { "aws:PrincipalArn" = ["arn:aws:iam::123456789012:role/gi-ci-prod-deploy"] } }
    }
    error_message = "Every principal but the deploy role must be denied writes and deletes under the code prefixes."
  }

  assert {
    condition     = length([for s in jsondecode(aws_s3_bucket_policy.this.policy).Statement : s if contains(flatten([s.Resource]), "arn:aws:s3:::gi-scripts/tmp/*")]) == 0
    error_message = "Glue's tmp/ prefix must stay writable by the jobs."
  }
}

run "rejects_a_code_writer_that_is_not_a_role" {
  command = plan

  variables {
    code_writer_role_arns = ["arn:aws:sts::123456789012:assumed-role/gi-ci-prod-deploy/session", "arn:aws:iam::123456789012:role/*"]
  }

  expect_failures = [var.code_writer_role_arns]
}
