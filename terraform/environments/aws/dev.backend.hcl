# terraform init -reconfigure -backend-config=dev.backend.hcl (with TF_DATA_DIR=.terraform-dev)
# Locking is S3-native (use_lockfile = true in versions.tf): no DynamoDB table.
bucket = "example-terraform-state-dev"
key    = "glue-incremental/dev/terraform.tfstate"
region = "eu-west-1"
