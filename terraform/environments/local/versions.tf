terraform {
  required_version = ">= 1.10"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.65, < 6.0"
    }
  }

  # Local state on purpose: the endpoint is disposable and so is its state.
  backend "local" {}
}
