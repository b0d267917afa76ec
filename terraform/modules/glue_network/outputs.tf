output "connection_name" {
  description = "The NETWORK Glue connection: a pipeline lists it in `connections` (its credentials come from `secret_arn`)."
  value       = aws_glue_connection.this.name
}

output "security_group_id" {
  description = "The self-referencing security group of the job's network interfaces."
  value       = aws_security_group.glue.id
}

output "vpc_network" {
  description = "The connection's subnet and security group, as glue_job's `vpc_network` (and a pipeline's `network`) takes them."
  value       = { subnet_ids = [var.subnet_id], security_group_ids = [aws_security_group.glue.id] }
}

output "endpoint_ids" {
  description = "VPC endpoint id per service (s3, dynamodb, secretsmanager, logs, monitoring), named or created."
  value = merge(
    var.existing_endpoints,
    { for k, e in aws_vpc_endpoint.gateway : k => e.id },
    { for k, e in aws_vpc_endpoint.interface : k => e.id },
  )
}
