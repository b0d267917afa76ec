# One account per environment: the dev account holds dev alone.
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
}
