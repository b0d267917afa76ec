variable "name" {
  description = "Name of the Glue connection and prefix of the security group and endpoints (the environment prefix and the network's key)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9_-]{0,59}$", var.name))
    error_message = "name must be 1-60 characters of [A-Za-z0-9_-]; got \"${var.name}\"."
  }
}

variable "vpc_id" {
  description = "The VPC the database is reachable from."
  type        = string

  validation {
    condition     = can(regex("^vpc-[0-9a-f]{8}([0-9a-f]{9})?$", var.vpc_id))
    error_message = "vpc_id must be a VPC id (vpc- and 8 or 17 hex digits); got \"${var.vpc_id}\"."
  }
}

variable "subnet_id" {
  description = "The private subnet Glue places the job's network interfaces in (one subnet per connection: https://docs.aws.amazon.com/glue/latest/dg/connection-properties.html)."
  type        = string

  validation {
    condition     = can(regex("^subnet-[0-9a-f]{8}([0-9a-f]{9})?$", var.subnet_id))
    error_message = "subnet_id must be a subnet id (subnet- and 8 or 17 hex digits); got \"${var.subnet_id}\"."
  }
}

variable "availability_zone" {
  description = "The subnet's availability zone (Glue's connection names both)."
  type        = string

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9][a-z]$", var.availability_zone))
    error_message = "availability_zone must be an availability zone name such as eu-west-1a; got \"${var.availability_zone}\"."
  }
}

variable "route_table_ids" {
  description = "Route tables of the subnet: the S3 and DynamoDB gateway endpoints this module creates are attached to them. Needed only for a gateway endpoint not named in existing_endpoints."
  type        = list(string)
  default     = []
  nullable    = false

  validation {
    condition     = alltrue([for id in var.route_table_ids : can(regex("^rtb-[0-9a-f]{8}([0-9a-f]{9})?$", id))])
    error_message = "route_table_ids must be route table ids (rtb- and 8 or 17 hex digits); invalid: ${join(", ", [for id in var.route_table_ids : "\"${id}\"" if !can(regex("^rtb-[0-9a-f]{8}([0-9a-f]{9})?$", id))])}."
  }
}

variable "existing_endpoints" {
  description = "VPC endpoints the VPC already has, keyed s3, dynamodb (gateway), secretsmanager, logs, monitoring (interface, private DNS): these are used, the others created. A VPC takes one private-DNS interface endpoint per service."
  type        = map(string)
  default     = {}
  nullable    = false

  validation {
    condition     = alltrue([for k in keys(var.existing_endpoints) : contains(["s3", "dynamodb", "secretsmanager", "logs", "monitoring"], k)])
    error_message = "existing_endpoints keys must be s3, dynamodb, secretsmanager, logs or monitoring; unknown: ${join(", ", [for k in keys(var.existing_endpoints) : k if !contains(["s3", "dynamodb", "secretsmanager", "logs", "monitoring"], k)])}."
  }

  validation {
    condition     = alltrue([for id in values(var.existing_endpoints) : can(regex("^vpce-[0-9a-f]{8}([0-9a-f]{9})?$", id))])
    error_message = "existing_endpoints values must be VPC endpoint ids (vpce- and 8 or 17 hex digits); invalid: ${join(", ", [for k, id in var.existing_endpoints : "${k} = \"${id}\"" if !can(regex("^vpce-[0-9a-f]{8}([0-9a-f]{9})?$", id))])}."
  }
}

variable "database" {
  description = "Where the JDBC database listens: its port and the CIDR blocks of its addresses (the job's security group may reach exactly these)."
  type = object({
    port        = number
    cidr_blocks = list(string)
  })

  validation {
    condition     = var.database.port >= 1 && var.database.port <= 65535 && floor(var.database.port) == var.database.port
    error_message = "database.port must be a TCP port (1-65535); got ${var.database.port}."
  }

  validation {
    condition     = length(var.database.cidr_blocks) > 0 && alltrue([for c in var.database.cidr_blocks : can(cidrhost(c, 0)) && can(regex("^[0-9.]+/[0-9]+$", c)) && c != "0.0.0.0/0"])
    error_message = "database.cidr_blocks must list at least one IPv4 CIDR block, never 0.0.0.0/0; invalid: ${join(", ", [for c in var.database.cidr_blocks : "\"${c}\"" if !(can(cidrhost(c, 0)) && can(regex("^[0-9.]+/[0-9]+$", c)) && c != "0.0.0.0/0")])}."
  }
}

variable "tags" {
  description = "Tags applied to every resource."
  type        = map(string)
  default     = {}
}
