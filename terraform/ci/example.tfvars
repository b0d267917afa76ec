# One account holding dev and prod (split the map across two applies for two accounts).
region            = "eu-west-1"
github_repository = "example/glue-incremental"

environments = {
  dev = {
    github_environment    = "dev"
    name_prefix           = "gi-dev"
    scripts_bucket_name   = "example-gi-dev-scripts"
    watermarks_table_name = "glue-watermarks-dev"
    state                 = { bucket = "example-terraform-state-dev", key = "glue-incremental/dev/terraform.tfstate" }
  }
  prod = {
    github_environment    = "production"
    name_prefix           = "gi-prod"
    scripts_bucket_name   = "example-gi-prod-scripts"
    watermarks_table_name = "glue-watermarks-prod"
    state                 = { bucket = "example-terraform-state-prod", key = "glue-incremental/prod/terraform.tfstate" }
  }
}
