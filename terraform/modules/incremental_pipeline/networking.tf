# JDBC pipelines in a VPC. A pipeline either names what exists (`connections` and
# `network`: a Glue connection and its subnets and security groups, e.g. owned by the
# networking team) or names an entry of var.networks (`network_name`), for which
# modules/glue_network creates the NETWORK connection, the self-referencing security
# group and the VPC endpoints the VPC lacks (docs/jdbc-networking.md).
module "network" {
  source   = "../glue_network"
  for_each = var.networks

  name               = "${var.name_prefix}-${replace(each.key, "_", "-")}"
  vpc_id             = each.value.vpc_id
  subnet_id          = each.value.subnet_id
  availability_zone  = each.value.availability_zone
  route_table_ids    = each.value.route_table_ids
  existing_endpoints = each.value.existing_endpoints
  database           = each.value.database
  tags               = var.tags
}

locals {
  # try(): an unknown network_name fails the precondition below in one line instead.
  pipeline_connections = {
    for k, p in var.pipelines : k => p.network_name == null ? p.connections : concat(p.connections, compact([try(module.network[p.network_name].connection_name, null)]))
  }
  pipeline_networks = {
    for k, p in var.pipelines : k => p.network_name == null ? p.network : try(module.network[p.network_name].vpc_network, null)
  }
}

resource "terraform_data" "pipeline_networks" {
  lifecycle {
    precondition {
      condition     = alltrue([for p in values(var.pipelines) : p.network_name == null || contains(keys(var.networks), coalesce(p.network_name, "-"))])
      error_message = "a pipeline's network_name must be a key of networks (${join(", ", keys(var.networks))}); unknown: ${join(", ", [for k, p in var.pipelines : "${k} (\"${p.network_name}\")" if p.network_name != null && !contains(keys(var.networks), coalesce(p.network_name, "-"))])}."
    }
  }
}
