variable "bucket_name" {
  description = "Name of the bucket CI deploys Glue scripts (`scripts/<version>/`) and the library zip (`lib/<version>/`) to; Glue jobs also use its `tmp/` prefix as --TempDir."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name)) && !can(regex("\\.\\.|^xn--|-s3alias$|^\\d+\\.\\d+\\.\\d+\\.\\d+$", var.bucket_name))
    error_message = "bucket_name must be a valid S3 bucket name (3-63 lowercase letters, digits, dots, hyphens); got \"${var.bucket_name}\"."
  }
}

variable "kms_key_arn" {
  description = "ARN of a customer managed KMS key for default encryption (SSE-KMS). Null uses SSE-S3 (AES256)."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.kms_key_arn))
    error_message = "kms_key_arn must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>); got \"${coalesce(var.kms_key_arn, "null")}\"."
  }
}

variable "tmp_expiration_days" {
  description = "Days after which objects under `tmp/` (Glue --TempDir spill, manifests) expire."
  type        = number
  default     = 7

  validation {
    condition     = var.tmp_expiration_days >= 1 && floor(var.tmp_expiration_days) == var.tmp_expiration_days
    error_message = "tmp_expiration_days must be a whole number of days >= 1; got ${var.tmp_expiration_days}."
  }
}

variable "noncurrent_version_expiration_days" {
  description = "Days a replaced script or library version is kept (for rollback) before it expires."
  type        = number
  default     = 30

  validation {
    condition     = var.noncurrent_version_expiration_days >= 1 && floor(var.noncurrent_version_expiration_days) == var.noncurrent_version_expiration_days
    error_message = "noncurrent_version_expiration_days must be a whole number of days >= 1; got ${var.noncurrent_version_expiration_days}."
  }
}

variable "force_destroy" {
  description = "Let `terraform destroy` delete a non-empty bucket. Only for disposable environments."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags applied to the bucket."
  type        = map(string)
  default     = {}
}

variable "code_writer_role_arns" {
  description = "IAM roles (the environment's CI deploy role, modules/ci_roles) that alone may put or delete objects under `releases/`, `scripts/`, `lib/` and `manifests/`: the bucket policy denies everyone else, whatever their identity policies allow. Empty: no such statement (the local stack)."
  type        = list(string)
  default     = []
  nullable    = false

  # aws:PrincipalArn of an assumed role is the role's ARN, never the session's:
  # https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn
  validation {
    condition     = alltrue([for arn in var.code_writer_role_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$", arn))])
    error_message = "code_writer_role_arns must be IAM role ARNs (arn:aws:iam::<12-digit account>:role/<name>), not sessions, users or wildcards; invalid: ${join(", ", [for arn in var.code_writer_role_arns : "\"${arn}\"" if !can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$", arn))])}. See https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn"
  }
}
