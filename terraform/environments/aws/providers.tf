provider "aws" {
  region = var.region

  default_tags {
    tags = {
      Project     = "glue-incremental"
      Environment = var.environment
      ManagedBy   = "terraform"
    }
  }
}
