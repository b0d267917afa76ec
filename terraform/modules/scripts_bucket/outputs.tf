output "bucket_name" {
  description = "Name of the scripts bucket."
  value       = aws_s3_bucket.this.bucket
}

output "bucket_arn" {
  description = "ARN of the scripts bucket."
  value       = aws_s3_bucket.this.arn
}

output "scripts_prefix_uri" {
  description = "S3 URI under which CI puts `<version>/<script>.py`."
  value       = "s3://${aws_s3_bucket.this.bucket}/scripts/"
}

output "lib_prefix_uri" {
  description = "S3 URI under which CI puts `<version>/glue_incremental.zip`."
  value       = "s3://${aws_s3_bucket.this.bucket}/lib/"
}

output "tmp_prefix_uri" {
  description = "S3 URI of the expiring `tmp/` prefix; give each job its own sub-prefix as --TempDir."
  value       = "s3://${aws_s3_bucket.this.bucket}/tmp/"
}
