# Copy to <account>.backend.hcl and set your state bucket (it must exist first):
#   terraform init -backend-config=<account>.backend.hcl
# Locking is S3-native (use_lockfile = true in versions.tf): no DynamoDB table.
bucket = "example-terraform-state-ci"
key    = "glue-incremental/ci/terraform.tfstate"
region = "eu-west-1"
