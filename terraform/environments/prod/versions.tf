terraform {
  required_version = ">= 1.7"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.60, < 6.0"
    }
  }

  # Partial configuration: bucket, key and region come from backend.hcl
  # (see backend.hcl.example). S3-native locking needs Terraform >= 1.10;
  # no DynamoDB lock table.
  backend "s3" {
    use_lockfile = true
    encrypt      = true
  }
}
