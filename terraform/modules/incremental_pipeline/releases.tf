# Immutable releases (docs/releases.md). A pipeline runs exactly one release:
# its script, the library and its team package from s3://<bucket>/releases/<id>/,
# and `--release` so every run names it. There are no mutable aliases: a release is
# required (var.release, or the pipeline's own).
#
# Terraform is the source of truth for which release a job runs; `deploy switch`
# is the break-glass path and prints the tfvars line to commit here.
locals {
  pipeline_releases = { for k, p in var.pipelines : k => coalesce(p.release, var.release) }

  script_locations  = { for k, r in local.pipeline_releases : k => "s3://${local.bucket}/releases/${r}/${local.jobs[k].script}.py" }
  library_locations = { for k, r in local.pipeline_releases : k => "s3://${local.bucket}/releases/${r}/glue_incremental.zip" }
  release_arguments = { for k, r in local.pipeline_releases : k => { "--release" = r } }
}

# A switch (`deploy switch`, or the next release in tfvars) must not wait for a new
# role policy: the role may read its script and the library in every release, all
# of which only the publish role can write (modules/scripts_bucket code_writer_role_arns).
resource "aws_iam_role_policy" "releases" {
  for_each = local.pipeline_releases

  name = "${local.job_names[each.key]}-releases"
  role = module.job[each.key].role_name
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid    = "ReadAnyRelease"
      Effect = "Allow"
      Action = ["s3:GetObject"]
      Resource = concat([
        "arn:${data.aws_partition.current.partition}:s3:::${local.bucket}/releases/*/${local.jobs[each.key].script}.py",
        "arn:${data.aws_partition.current.partition}:s3:::${local.bucket}/releases/*/glue_incremental.zip",
      ], [for k, uri in local.package_uris : "arn:${data.aws_partition.current.partition}:s3:::${local.bucket}/releases/*/${basename(uri)}" if k == each.key && startswith(uri, "s3://${local.bucket}/releases/")])
    }]
  })
}
