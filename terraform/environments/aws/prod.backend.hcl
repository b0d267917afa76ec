# terraform init -reconfigure -backend-config=prod.backend.hcl (with TF_DATA_DIR=.terraform-prod)
# Locking is S3-native (use_lockfile = true in versions.tf): no DynamoDB table.
bucket = "example-terraform-state-prod"
key    = "glue-incremental/prod/terraform.tfstate"
region = "eu-west-1"
