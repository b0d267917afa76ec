# One account per environment: the prod account holds prod alone.
region            = "eu-west-1"
github_repository = "example/glue-incremental"

environments = {
  prod = {
    github_environment    = "production"
    name_prefix           = "gi-prod"
    scripts_bucket_name   = "example-gi-prod-scripts"
    watermarks_table_name = "glue-watermarks-prod"
    state                 = { bucket = "example-terraform-state-prod", key = "glue-incremental/prod/terraform.tfstate" }
  }
}
