terraform {
  required_version = ">= 1.10"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.65, < 6.0"
    }
  }

  # Partial configuration: bucket, key and region come from <env>.backend.hcl
  # (terraform init -backend-config=<env>.backend.hcl). S3-native locking
  # (Terraform >= 1.10); no DynamoDB lock table.
  backend "s3" {
    use_lockfile = true
    encrypt      = true
  }
}
