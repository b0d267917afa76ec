# Immutable releases (docs/releases.md). A pipeline runs exactly one release:
# its script and the library from s3://<bucket>/releases/<id>/, and `--release`
# so every run names it. Without a release (var.release and the pipeline's both
# null) the job keeps the artifact_version folders, as before.
#
# Terraform is the source of truth for which release a job runs; `deploy switch`
# is the break-glass path and prints the tfvars line to commit here.
locals {
  pipeline_releases = { for k, p in var.pipelines : k => try(coalesce(p.release, var.release), null) }

  script_locations = {
    for k, r in local.pipeline_releases : k => r == null ?
    "s3://${local.bucket}/scripts/${var.artifact_version}/${local.jobs[k].script}.py" :
    "s3://${local.bucket}/releases/${r}/${local.jobs[k].script}.py"
  }
  library_locations = {
    for k, r in local.pipeline_releases : k => r == null ?
    "s3://${local.bucket}/lib/${var.artifact_version}/glue_incremental.zip" :
    "s3://${local.bucket}/releases/${r}/glue_incremental.zip"
  }
  release_arguments = { for k, r in local.pipeline_releases : k => r == null ? {} : { "--release" = r } }
}

# A switch (`deploy switch`, or the next release in tfvars) must not wait for a new
# role policy: the role may read its script and the library in every release, all
# of which only the deploy role can write (modules/scripts_bucket code_writer_role_arns).
resource "aws_iam_role_policy" "releases" {
  for_each = { for k, r in local.pipeline_releases : k => r if r != null }

  name = "${local.job_names[each.key]}-releases"
  role = module.job[each.key].role_name
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid    = "ReadAnyRelease"
      Effect = "Allow"
      Action = ["s3:GetObject"]
      Resource = [
        "arn:${data.aws_partition.current.partition}:s3:::${local.bucket}/releases/*/${local.jobs[each.key].script}.py",
        "arn:${data.aws_partition.current.partition}:s3:::${local.bucket}/releases/*/glue_incremental.zip",
      ]
    }]
  })
}
