mock_provider "aws" {
  source = "../../testing/aws"

  mock_data "aws_vpc" {
    defaults = { cidr_block = "10.20.0.0/16" }
  }

  mock_data "aws_vpc_endpoint" {
    defaults = { prefix_list_id = "pl-0000000000existing" }
  }

  mock_resource "aws_vpc_endpoint" {
    defaults = { prefix_list_id = "pl-00000000000created" }
  }

  mock_resource "aws_security_group" {
    defaults = { id = "sg-0123456789abcdef0" }
  }
}

variables {
  name              = "gi-test-shop"
  vpc_id            = "vpc-0123456789abcdef0"
  subnet_id         = "subnet-0123456789abcdef0"
  availability_zone = "eu-west-1a"
  route_table_ids   = ["rtb-0123456789abcdef0"]
  database          = { port = 5432, cidr_blocks = ["10.20.30.0/24"] }
}

run "a_network_connection_in_the_subnet_with_a_self_referencing_security_group" {
  command = plan

  assert {
    condition = (
      aws_glue_connection.this.connection_type == "NETWORK" &&
      aws_glue_connection.this.physical_connection_requirements[0].subnet_id == "subnet-0123456789abcdef0" &&
      aws_glue_connection.this.physical_connection_requirements[0].availability_zone == "eu-west-1a"
    )
    error_message = "The connection is a NETWORK connection in the given subnet and availability zone."
  }

  assert {
    condition     = aws_vpc_security_group_ingress_rule.self.from_port == 0 && aws_vpc_security_group_ingress_rule.self.to_port == 65535 && aws_vpc_security_group_ingress_rule.self.ip_protocol == "tcp"
    error_message = "The security group admits every TCP port from itself (Glue's self-referencing rule)."
  }

  assert {
    condition     = [for r in aws_vpc_security_group_egress_rule.database : "${r.cidr_ipv4}:${r.from_port}"] == ["10.20.30.0/24:5432"]
    error_message = "The job reaches exactly the database's addresses on its port."
  }
}

run "every_endpoint_the_job_needs_is_created_when_none_is_named" {
  command = plan

  assert {
    condition = (
      { for k, e in aws_vpc_endpoint.gateway : k => "${e.vpc_endpoint_type} ${e.service_name}" } == {
        s3       = "Gateway com.amazonaws.eu-west-1.s3"
        dynamodb = "Gateway com.amazonaws.eu-west-1.dynamodb"
      } &&
      { for k, e in aws_vpc_endpoint.interface : k => "${e.vpc_endpoint_type} ${e.service_name} ${e.private_dns_enabled}" } == {
        secretsmanager = "Interface com.amazonaws.eu-west-1.secretsmanager true"
        logs           = "Interface com.amazonaws.eu-west-1.logs true"
        monitoring     = "Interface com.amazonaws.eu-west-1.monitoring true"
      }
    )
    error_message = "S3 and DynamoDB gateway endpoints and Secrets Manager, CloudWatch Logs and monitoring interface endpoints (private DNS) are created."
  }

  assert {
    condition     = alltrue([for e in aws_vpc_endpoint.gateway : e.route_table_ids == toset(["rtb-0123456789abcdef0"])])
    error_message = "The gateway endpoints are attached to the subnet's route tables."
  }
}

run "named_endpoints_are_used_and_not_created" {
  command = plan

  variables {
    route_table_ids    = []
    existing_endpoints = { s3 = "vpce-0123456789abcdef0", dynamodb = "vpce-0123456789abcdef1", secretsmanager = "vpce-0123456789abcdef2" }
  }

  assert {
    condition     = length(aws_vpc_endpoint.gateway) == 0 && keys(aws_vpc_endpoint.interface) == ["logs", "monitoring"]
    error_message = "Only the endpoints the VPC lacks are created (one private-DNS interface endpoint per service and VPC)."
  }
}

run "creating_a_gateway_endpoint_without_route_tables_is_refused" {
  command = plan

  variables {
    route_table_ids = []
  }

  expect_failures = [aws_vpc_endpoint.gateway]
}

run "rejects_a_subnet_id_that_is_not_one" {
  command = plan

  variables {
    subnet_id = "subnet-XYZ"
  }

  expect_failures = [var.subnet_id]
}

run "rejects_an_availability_zone_that_is_a_region" {
  command = plan

  variables {
    availability_zone = "eu-west-1"
  }

  expect_failures = [var.availability_zone]
}

run "rejects_an_unknown_endpoint_key_and_a_malformed_endpoint_id" {
  command = plan

  variables {
    existing_endpoints = { sts = "vpce-0123456789abcdef0", s3 = "vpc-0123456789abcdef0" }
  }

  expect_failures = [var.existing_endpoints]
}

run "rejects_a_database_open_to_the_world" {
  command = plan

  variables {
    database = { port = 5432, cidr_blocks = ["0.0.0.0/0"] }
  }

  expect_failures = [var.database]
}
