terraform {
  required_version = ">= 1.10"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.65, < 6.0"
    }
  }

  # Partial configuration, like environments/aws: an administrator applies this
  # root once per account (it creates the roles CI then uses for everything else).
  backend "s3" {
    use_lockfile = true
    encrypt      = true
  }
}
