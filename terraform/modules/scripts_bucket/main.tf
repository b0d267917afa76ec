resource "aws_s3_bucket" "this" {
  #checkov:skip=CKV_AWS_18:Holds build artifacts that CI can re-upload; CloudTrail data events, not server access logs, are the audit trail.
  #checkov:skip=CKV_AWS_144:Artifacts are reproducible from git tags by CI; cross-region replication buys nothing here.
  #checkov:skip=CKV2_AWS_62:Nothing consumes object events from an artifacts bucket.
  #checkov:skip=CKV_AWS_19:Encrypted by aws_s3_bucket_server_side_encryption_configuration.this below (SSE-KMS with kms_key_arn, else SSE-S3); checkov cannot resolve a key created by the calling module.
  #checkov:skip=CKV_AWS_145:SSE-KMS whenever the environment brings or creates a scripts key (incremental_pipeline encryption); SSE-S3 is the deliberate fallback.
  bucket        = var.bucket_name
  force_destroy = var.force_destroy
  tags          = var.tags
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    # Bucket keys cut KMS request costs for Glue's many small temp objects.
    bucket_key_enabled = var.kms_key_arn != null
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    id     = "expire-tmp"
    status = "Enabled"

    filter {
      prefix = "tmp/"
    }

    expiration {
      days = var.tmp_expiration_days
    }
  }

  rule {
    id     = "expire-noncurrent-versions"
    status = "Enabled"

    filter {}

    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_version_expiration_days
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }

  # Lifecycle rules on an unversioned bucket would not see noncurrent versions.
  depends_on = [aws_s3_bucket_versioning.this]
}

resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat([
      {
        Sid       = "DenyInsecureTransport"
        Effect    = "Deny"
        Principal = "*"
        Action    = "s3:*"
        Resource  = [aws_s3_bucket.this.arn, "${aws_s3_bucket.this.arn}/*"]
        Condition = { Bool = { "aws:SecureTransport" = "false" } }
      },
    ], local.release_statements, local.code_writer_statements)
  })

  # S3 rejects policy writes that race the public access block settings.
  depends_on = [aws_s3_bucket_public_access_block.this]
}

# Code every job runs lives under these prefixes: only the deploy role may write or
# delete there, whatever its identity policies grant anyone else. aws:PrincipalArn
# with ArnNotEquals rather than NotPrincipal, as IAM recommends (NotPrincipal with
# Deny always denies a role carrying a permissions boundary, as the deploy role does):
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_notprincipal.html
# https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn
locals {
  code_prefixes = ["releases", "scripts", "lib", "manifests"]

  # A release is immutable by the bucket's own rules, whoever writes: a PutObject under
  # releases/ must carry If-None-Match (S3 then refuses a key that exists), and no one
  # deletes a release object ("Enforce conditional writes on Amazon S3 buckets",
  # https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes-enforce.html).
  # deploy writes releases with If-None-Match: * (glue_incremental_tools/releases.py).
  release_statements = [
    {
      Sid       = "ReleasesAreWrittenOnce"
      Effect    = "Deny"
      Principal = "*"
      Action    = ["s3:PutObject"]
      Resource  = ["${aws_s3_bucket.this.arn}/releases/*"]
      Condition = { Null = { "s3:if-none-match" = "true" } }
    },
    {
      Sid       = "ReleasesAreNeverDeleted"
      Effect    = "Deny"
      Principal = "*"
      Action    = ["s3:DeleteObject", "s3:DeleteObjectVersion"]
      Resource  = ["${aws_s3_bucket.this.arn}/releases/*"]
    },
  ]

  code_writer_statements = length(var.code_writer_role_arns) == 0 ? [] : [
    {
      Sid       = "OnlyTheDeployRoleWritesCode"
      Effect    = "Deny"
      Principal = "*"
      Action    = ["s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutObjectAcl", "s3:RestoreObject"]
      Resource  = [for prefix in local.code_prefixes : "${aws_s3_bucket.this.arn}/${prefix}/*"]
      Condition = { ArnNotEquals = { "aws:PrincipalArn" = var.code_writer_role_arns } }
    },
  ]
}
