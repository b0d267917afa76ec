# The network path of a JDBC pipeline's Glue job inside a VPC: a NETWORK Glue connection
# in one subnet, a security group referencing itself, and the VPC endpoints the job
# reaches AWS through (it has no internet path: Glue gives its ENIs private IPs only).
# https://docs.aws.amazon.com/glue/latest/dg/setup-vpc-for-glue-access.html (the
# self-referencing inbound rule: Spark's driver and executors talk to each other on
# every TCP port), https://docs.aws.amazon.com/glue/latest/dg/connection-S3-VPC.html,
# https://docs.aws.amazon.com/glue/latest/dg/connection-properties.html (NETWORK type).
#
# Endpoints: each one named in var.existing_endpoints is used as it is; each one not
# named is created. A VPC has at most one interface endpoint per service with private
# DNS (a second fails: "conflicting DNS domain"), and gateway endpoints belong to route
# tables the networking team often owns, so a VPC that has them names them instead.

data "aws_region" "current" {}

data "aws_vpc" "this" {
  id = var.vpc_id
}

locals {
  region = data.aws_region.current.name
  gateway_services = {
    s3       = "com.amazonaws.${local.region}.s3"
    dynamodb = "com.amazonaws.${local.region}.dynamodb"
  }
  # The job reads its secret, writes its logs and publishes its metrics through these.
  interface_services = {
    secretsmanager = "com.amazonaws.${local.region}.secretsmanager"
    logs           = "com.amazonaws.${local.region}.logs"
    monitoring     = "com.amazonaws.${local.region}.monitoring"
  }
  created_gateways   = { for k, service in local.gateway_services : k => service if lookup(var.existing_endpoints, k, null) == null }
  created_interfaces = { for k, service in local.interface_services : k => service if lookup(var.existing_endpoints, k, null) == null }
}

resource "aws_security_group" "glue" {
  #checkov:skip=CKV2_AWS_5:Attached to the Glue connection (physical_connection_requirements), which checkov does not follow.
  name        = "${var.name}-glue"
  description = "Glue job ENIs of ${var.name}: Spark nodes reach each other (self-referencing), the VPC endpoints and the database."
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "self" {
  #checkov:skip=CKV_AWS_24:The only source is this security group itself (referenced_security_group_id), never 0.0.0.0/0.
  #checkov:skip=CKV_AWS_25:The only source is this security group itself (referenced_security_group_id), never 0.0.0.0/0.
  #checkov:skip=CKV_AWS_260:The only source is this security group itself (referenced_security_group_id), never 0.0.0.0/0.
  security_group_id            = aws_security_group.glue.id
  description                  = "Glue requires every TCP port open between the job's own ENIs."
  ip_protocol                  = "tcp"
  from_port                    = 0
  to_port                      = 65535
  referenced_security_group_id = aws_security_group.glue.id
  tags                         = var.tags
}

resource "aws_vpc_security_group_egress_rule" "self" {
  security_group_id            = aws_security_group.glue.id
  description                  = "Spark driver and executors, and the interface endpoints this group is attached to."
  ip_protocol                  = "tcp"
  from_port                    = 0
  to_port                      = 65535
  referenced_security_group_id = aws_security_group.glue.id
  tags                         = var.tags
}

resource "aws_vpc_security_group_egress_rule" "https_in_vpc" {
  security_group_id = aws_security_group.glue.id
  description       = "HTTPS to interface endpoints in the VPC (Secrets Manager, CloudWatch Logs and metrics)."
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  cidr_ipv4         = data.aws_vpc.this.cidr_block
  tags              = var.tags
}

resource "aws_vpc_security_group_egress_rule" "gateways" {
  for_each = local.gateway_services

  security_group_id = aws_security_group.glue.id
  description       = "HTTPS to ${each.key} through its gateway endpoint."
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  prefix_list_id    = lookup(var.existing_endpoints, each.key, null) == null ? aws_vpc_endpoint.gateway[each.key].prefix_list_id : data.aws_vpc_endpoint.gateway[each.key].prefix_list_id
  tags              = var.tags
}

resource "aws_vpc_security_group_egress_rule" "database" {
  for_each = toset(var.database.cidr_blocks)

  security_group_id = aws_security_group.glue.id
  description       = "The JDBC database's port."
  ip_protocol       = "tcp"
  from_port         = var.database.port
  to_port           = var.database.port
  cidr_ipv4         = each.value
  tags              = var.tags
}

data "aws_vpc_endpoint" "gateway" {
  for_each = { for k, service in local.gateway_services : k => service if lookup(var.existing_endpoints, k, null) != null }

  id = var.existing_endpoints[each.key]
}

resource "aws_vpc_endpoint" "gateway" {
  for_each = local.created_gateways

  vpc_id            = var.vpc_id
  service_name      = each.value
  vpc_endpoint_type = "Gateway"
  route_table_ids   = var.route_table_ids
  tags              = merge(var.tags, { Name = "${var.name}-${each.key}" })

  lifecycle {
    precondition {
      condition     = length(var.route_table_ids) > 0
      error_message = "glue_network ${var.name}: creating the ${each.key} gateway endpoint needs route_table_ids (the subnet's route tables), or name the VPC's endpoint in existing_endpoints.${each.key}."
    }
  }
}

resource "aws_vpc_endpoint" "interface" {
  for_each = local.created_interfaces

  vpc_id              = var.vpc_id
  service_name        = each.value
  vpc_endpoint_type   = "Interface"
  subnet_ids          = [var.subnet_id]
  security_group_ids  = [aws_security_group.glue.id]
  private_dns_enabled = true
  tags                = merge(var.tags, { Name = "${var.name}-${each.key}" })
}

resource "aws_glue_connection" "this" {
  name            = var.name
  description     = "Network path of ${var.name}'s Glue jobs: subnet ${var.subnet_id} (${var.availability_zone}), security group ${aws_security_group.glue.id}."
  connection_type = "NETWORK"
  # A NETWORK connection holds no credentials; the tag says so to the pull-request plan
  # role, which may read (refresh) only connections carrying it (modules/ci_roles).
  tags = merge(var.tags, { "glue-incremental:credentials" = "none" })

  physical_connection_requirements {
    subnet_id              = var.subnet_id
    availability_zone      = var.availability_zone
    security_group_id_list = [aws_security_group.glue.id]
  }

  # A job starting before its endpoints exist could not read its secret.
  depends_on = [aws_vpc_endpoint.gateway, aws_vpc_endpoint.interface]
}
