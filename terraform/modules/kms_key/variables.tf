variable "name" {
  description = "Alias of the key (`alias/<name>`)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9/_-]{1,250}$", var.name)) && !startswith(var.name, "aws/")
    error_message = "name must be 1-250 characters of [A-Za-z0-9/_-] and must not start with aws/ (https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateAlias.html); got \"${var.name}\"."
  }
}

variable "description" {
  description = "What the key protects."
  type        = string
}

variable "user_role_arns" {
  description = "IAM roles that may encrypt and decrypt with the key (and nothing else may, apart from service_users)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for arn in var.user_role_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$", arn))])
    error_message = "user_role_arns must be IAM role ARNs (no wildcard)."
  }
}

variable "admin_role_arns" {
  description = "Roles that apply this key (the CI deploy role): named as principals for the actions an apply takes on it (rotation, policy, tags, description, alias, deletion), so no identity policy needs them on other keys. The roles must exist when the key is created."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition     = alltrue([for arn in var.admin_role_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$", arn))])
    error_message = "admin_role_arns must be IAM role ARNs (no wildcard)."
  }
}

variable "service_users" {
  description = "AWS services that may use the key, each scoped by one condition (e.g. logs.<region>.amazonaws.com with ArnLike kms:EncryptionContext:aws:logs:arn on the log groups)."
  type = list(object({
    service            = string
    condition_operator = string
    condition_key      = string
    condition_values   = list(string)
  }))
  default = []
}

variable "deletion_window_in_days" {
  description = "Waiting period before a destroyed key is deleted."
  type        = number
  default     = 30

  validation {
    condition     = var.deletion_window_in_days >= 7 && var.deletion_window_in_days <= 30 && floor(var.deletion_window_in_days) == var.deletion_window_in_days
    error_message = "deletion_window_in_days must be a whole number from 7 to 30 (https://docs.aws.amazon.com/kms/latest/APIReference/API_ScheduleKeyDeletion.html); got ${var.deletion_window_in_days}."
  }
}

variable "tags" {
  description = "Tags applied to the key."
  type        = map(string)
  default     = {}
}
