mock_provider "aws" {
  source = "../../testing/aws"
}

variables {
  name                  = "orders-load"
  script_location       = "s3://gi-scripts/releases/0123456789abcdef/incremental_load.py"
  library_location      = "s3://gi-scripts/releases/0123456789abcdef/glue_incremental.zip"
  temp_dir              = "s3://gi-scripts/tmp/orders-load/"
  watermarks_table_name = "glue-watermarks"
  watermarks_table_arn  = "arn:aws:dynamodb:eu-west-1:123456789012:table/glue-watermarks"
  read_s3_uris          = ["s3://gi-lake/raw/orders/"]
  write_s3_uris         = ["s3://gi-lake/curated/orders/"]
  default_arguments = {
    "--source"      = "s3://gi-lake/raw/orders/"
    "--target_path" = "s3://gi-lake/curated/orders/"
  }
}

run "bookmarks_enabled_by_default" {
  assert {
    condition     = aws_glue_job.this.default_arguments["--job-bookmark-option"] == "job-bookmark-enable"
    error_message = "Jobs must default to --job-bookmark-option job-bookmark-enable."
  }

  assert {
    condition     = aws_glue_job.this.glue_version == "5.1" && aws_glue_job.this.worker_type == "G.1X" && aws_glue_job.this.command[0].name == "glueetl"
    error_message = "Defaults must be a Glue 5.1 Spark job on G.1X workers."
  }
}

run "bookmark_option_maps_to_glue_value" {
  variables {
    bookmark_option = "pause"
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--job-bookmark-option"] == "job-bookmark-pause"
    error_message = "bookmark_option pause must become job-bookmark-pause."
  }
}

run "runs_one_at_a_time_and_queues_the_rest" {
  assert {
    condition     = aws_glue_job.this.execution_property[0].max_concurrent_runs == 1
    error_message = "Two runs of one job would race on its watermark: max_concurrent_runs must default to 1."
  }

  assert {
    condition     = aws_glue_job.this.job_run_queuing_enabled == true
    error_message = "Runs beyond the concurrency limit must queue, not fail."
  }
}

run "module_defaults_survive_caller_arguments" {
  variables {
    default_arguments = {
      "--source"              = "s3://gi-lake/raw/orders/"
      "--enable-job-insights" = "false"
    }
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--source"] == "s3://gi-lake/raw/orders/"
    error_message = "The job's own arguments must be passed through."
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--enable-job-insights"] == "false"
    error_message = "A caller argument must override the module default of the same name."
  }

  assert {
    condition = alltrue([for k in ["--job-language", "--job-bookmark-option", "--extra-py-files", "--enable-metrics", "--enable-observability-metrics", "--enable-job-insights"] :
    contains(keys(aws_glue_job.this.default_arguments), k)])
    error_message = "Caller arguments must be merged over the module defaults, not replace them."
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--extra-py-files"] == "s3://gi-scripts/releases/0123456789abcdef/glue_incremental.zip" && aws_glue_job.this.default_arguments["--enable-metrics"] == "true"
    error_message = "Defaults not overridden by the caller must keep their values."
  }

  assert {
    condition     = length(setintersection(keys(aws_glue_job.this.default_arguments), ["--enable-continuous-cloudwatch-log", "--enable-continuous-log-filter", "--continuous-log-logGroup"])) == 0
    error_message = "Glue 5 logs in real time; continuous-logging arguments must not be set."
  }

  assert {
    condition = aws_glue_job.this.non_overridable_arguments == tomap({
      "--watermarks_table"  = "glue-watermarks"
      "--watermark_name"    = "orders-load"
      "--lease_seconds"     = "900"
      "--metrics_namespace" = "GlueIncremental"
    })
    error_message = "--watermarks_table, --watermark_name (the job name by default), --lease_seconds and --metrics_namespace must be non-overridable."
  }
}

run "watermark_writes_are_confined_to_own_state" {
  assert {
    condition = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "WriteOwnWatermarkItems"]) == {
      Sid       = "WriteOwnWatermarkItems"
      Effect    = "Allow"
      Action    = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"]
      Resource  = "arn:aws:dynamodb:eu-west-1:123456789012:table/glue-watermarks"
      Condition = { "ForAllValues:StringEquals" = { "dynamodb:LeadingKeys" = ["orders-load"] } }
    }
    error_message = "Writes must be limited to the watermarks table and to items whose leading key is the job's own state name."
  }

  assert {
    condition = alltrue([for s in jsondecode(aws_iam_role_policy.this.policy).Statement :
    s.Resource == "arn:aws:dynamodb:eu-west-1:123456789012:table/glue-watermarks" if anytrue([for a in flatten([s.Action]) : startswith(a, "dynamodb:")])])
    error_message = "Every DynamoDB action must be granted on the watermarks table ARN only."
  }
}

run "reads_cover_own_and_declared_upstream_states_only" {
  variables {
    watermark_name       = "orders-enriched"
    upstream_state_names = ["orders-load", "customers-load"]
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ReadOwnAndUpstreamWatermarkItems"]).Condition["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"] == ["orders-enriched", "orders-load", "customers-load"]
    error_message = "Reads must be limited to the job's own state and its declared upstream states."
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "WriteOwnWatermarkItems"]).Condition["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"] == ["orders-enriched"]
    error_message = "Upstream states must never become writable."
  }

  assert {
    condition     = aws_glue_job.this.non_overridable_arguments["--watermark_name"] == "orders-enriched"
    error_message = "watermark_name must be passed as the non-overridable --watermark_name."
  }
}

run "role_reaches_only_its_namespace_log_groups_and_prefixes" {
  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "PublishRunMetrics"]).Condition.StringEquals["cloudwatch:namespace"] == ["GlueIncremental", "Glue"]
    error_message = "With Glue metrics on, only the Glue namespace may be added to the project namespace."
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--custom-logGroup-prefix"] == "/aws-glue/jobs/orders-load"
    error_message = "The job must log under its own prefix so the role can be scoped to it."
  }

  assert {
    condition     = toset([for g in aws_cloudwatch_log_group.this : g.name]) == toset(["/aws-glue/jobs/orders-load/error", "/aws-glue/jobs/orders-load/output"])
    error_message = "The module must create exactly the job's error and output log groups."
  }

  assert {
    condition     = toset(one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "WriteOwnLogGroups"]).Resource) == toset(flatten([for g in aws_cloudwatch_log_group.this : [g.arn, "${g.arn}:log-stream:*"]]))
    error_message = "Log permissions must name only the job's own log groups."
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ReadOwnScriptAndLibrary"]).Resource == ["arn:aws:s3:::gi-scripts/releases/0123456789abcdef/incremental_load.py", "arn:aws:s3:::gi-scripts/releases/0123456789abcdef/glue_incremental.zip"]
    error_message = "The role may read exactly its script and the library zip."
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ReadDataPrefixes"]).Resource == ["arn:aws:s3:::gi-lake/raw/orders/*"]
    error_message = "Reads must be limited to the declared read prefixes."
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ReadWriteOwnPrefixes"]).Resource == ["arn:aws:s3:::gi-lake/curated/orders/*", "arn:aws:s3:::gi-scripts/tmp/orders-load/*"]
    error_message = "Writes must be limited to the declared write prefixes and the job's TempDir."
  }

  assert {
    condition = alltrue([for s in jsondecode(aws_iam_role_policy.this.policy).Statement :
    length(s.Condition.StringLike["s3:prefix"]) > 0 if contains(flatten([s.Action]), "s3:ListBucket")])
    error_message = "ListBucket must be conditioned on the declared prefixes."
  }

  assert {
    condition     = !anytrue([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : contains(flatten([s.Resource]), "*") if s.Sid != "PublishRunMetrics"])
    error_message = "Only PutMetricData (which has no resource-level permissions) may use Resource \"*\"."
  }

  assert {
    condition     = jsondecode(aws_iam_role.this.assume_role_policy).Statement[0].Principal == { Service = "glue.amazonaws.com" }
    error_message = "Only the Glue service may assume the job role."
  }
}

run "metrics_only_to_the_project_namespace" {
  variables {
    enable_glue_metrics = false
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "PublishRunMetrics"]).Condition == { StringEquals = { "cloudwatch:namespace" = ["GlueIncremental"] } }
    error_message = "cloudwatch:PutMetricData must be conditioned on cloudwatch:namespace = GlueIncremental."
  }
}

run "rejects_unknown_worker_type" {
  command = plan

  variables {
    worker_type = "G.3X"
  }

  expect_failures = [var.worker_type]
}

run "rejects_invalid_bookmark_option" {
  command = plan

  variables {
    bookmark_option = "job-bookmark-enable"
  }

  expect_failures = [var.bookmark_option]
}

run "rejects_arguments_that_would_escape_the_role_scoping" {
  command = plan

  variables {
    default_arguments = { "--watermark_name" = "someone-elses-state" }
  }

  expect_failures = [var.default_arguments]
}

run "rejects_glue_4_and_whole_bucket_writes" {
  command = plan

  variables {
    glue_version  = "4.0"
    write_s3_uris = ["s3://gi-lake"]
  }

  expect_failures = [var.glue_version, var.write_s3_uris]
}

run "iceberg_target_adds_datalake_formats_catalog_conf_and_table_scoped_glue_permissions" {
  variables {
    iceberg_target = {
      account_id = "123456789012"
      region     = "eu-west-1"
      database   = "curated"
      table      = "orders"
      warehouse  = "s3://gi-lake/iceberg/"
    }
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--datalake-formats"] == "iceberg" && aws_glue_job.this.default_arguments["--target_table"] == "curated.orders"
    error_message = "An Iceberg target must turn on --datalake-formats iceberg and pass --target_table."
  }

  assert {
    condition     = strcontains(aws_glue_job.this.default_arguments["--conf"], "spark.sql.catalog.glue_catalog.catalog-impl=org.apache.iceberg.aws.glue.GlueCatalog")
    error_message = "The glue_catalog must be the Glue Data Catalog."
  }

  assert {
    condition = contains(
      flatten([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Resource if s.Sid == "IcebergTargetTable"]),
      "arn:aws:glue:eu-west-1:123456789012:table/curated/orders"
    ) && !anytrue([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : anytrue([for r in flatten([s.Resource]) : endswith(r, "/*")]) if s.Sid == "IcebergTargetTable"])
    error_message = "Glue table permissions must name exactly the target table, never a wildcard."
  }

  assert {
    condition = contains(
      flatten([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Resource if s.Sid == "IcebergTargetTable"]),
      "arn:aws:glue:eu-west-1:123456789012:table/curated/orders__delivery"
    )
    error_message = "The job creates the deliveries table orders__delivery beside the target: the role must be allowed to."
  }

  assert {
    condition = contains(
      flatten([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Resource if s.Sid == "IcebergTargetTable"]),
      "arn:aws:glue:eu-west-1:123456789012:table/curated/orders__tombstone"
    )
    error_message = "The job creates the tombstones table orders__tombstone beside the target when keys are deleted: the role must be allowed to."
  }
}

run "no_iceberg_target_no_glue_table_permissions" {
  assert {
    condition     = !contains([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Sid], "IcebergTargetTable") && !contains(keys(aws_glue_job.this.default_arguments), "--datalake-formats")
    error_message = "Without an Iceberg target the job gets no Glue table permissions and no --datalake-formats."
  }
}

run "an_iceberg_table_name_that_is_not_a_glue_identifier_is_rejected" {
  command = plan

  variables {
    iceberg_target = {
      account_id = "123456789012"
      region     = "eu-west-1"
      database   = "curated"
      table      = "Orders-2024"
      warehouse  = "s3://gi-lake/iceberg/"
    }
  }

  expect_failures = [var.iceberg_target]
}

run "metrics_namespace_cannot_be_overridden_at_run_time" {
  assert {
    condition     = aws_glue_job.this.non_overridable_arguments["--metrics_namespace"] == "GlueIncremental" && !contains(keys(aws_glue_job.this.default_arguments), "--metrics_namespace")
    error_message = "--metrics_namespace must be non-overridable: a run-time override is denied by IAM after the commit and leaves the alarms blind."
  }
}

run "jdbc_secret_is_readable_by_exactly_this_job" {
  variables {
    jdbc_credentials = { secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi/orders-db-AbCdEf" }
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ReadJdbcSecret"]).Resource == "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi/orders-db-AbCdEf"
    error_message = "The role must read exactly the job's secret."
  }

  assert {
    condition     = length([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if contains(flatten([s.Action]), "secretsmanager:GetSecretValue")]) == 1
    error_message = "GetSecretValue must be granted in one statement only."
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--source_secret_id"] == "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi/orders-db-AbCdEf"
    error_message = "The secret must reach the job as --source_secret_id."
  }
}

run "no_secret_no_secret_permission" {
  assert {
    condition     = length([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if contains(flatten([s.Action]), "secretsmanager:GetSecretValue") || contains(flatten([s.Action]), "glue:GetConnection")]) == 0
    error_message = "A job without jdbc_credentials must not read any secret or connection."
  }
}

run "glue_connection_becomes_the_jobs_connection" {
  variables {
    jdbc_credentials = { connection_names = ["orders-db"] }
  }

  assert {
    condition     = aws_glue_job.this.connections == tolist(["orders-db"]) && aws_glue_job.this.default_arguments["--connection_name"] == "orders-db"
    error_message = "connection_names must be the job's connections, and a single one its --connection_name."
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ReadOwnConnections"]).Resource == ["arn:aws:glue:eu-west-1:123456789012:catalog", "arn:aws:glue:eu-west-1:123456789012:connection/orders-db"]
    error_message = "glue:GetConnection must be limited to the job's own connections."
  }
}

run "a_vpc_job_deletes_only_network_interfaces_in_its_subnets" {
  command = plan

  variables {
    vpc_network = { subnet_ids = ["subnet-0123456789abcdef0"], security_group_ids = ["sg-0123456789abcdef0"] }
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "DeleteRunNetworkInterfaces"]).Condition.ArnEquals["ec2:Subnet"] == ["arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-0123456789abcdef0"]
    error_message = "ec2:DeleteNetworkInterface must be confined to the connection's subnets: any other interface of the account is not the job's."
  }
}

run "rejects_a_password_in_default_arguments" {
  command = plan

  variables {
    default_arguments = {
      "--source"          = "jdbc:postgresql://db:5432/shop"
      "--source_password" = "hunter2"
    }
  }

  expect_failures = [var.default_arguments]
}

run "rejects_a_wildcard_secret" {
  command = plan

  variables {
    jdbc_credentials = { secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:*" }
  }

  expect_failures = [var.jdbc_credentials]
}

run "rejects_flex_on_workers_glue_refuses_for_it" {
  command = plan

  variables {
    execution_class = "FLEX"
    worker_type     = "G.4X"
  }

  expect_failures = [aws_glue_job.this]
}

run "accepts_flex_on_g1x" {
  command = plan

  variables {
    execution_class         = "FLEX"
    worker_type             = "G.1X"
    job_run_queuing_enabled = false
  }

  assert {
    condition     = aws_glue_job.this.execution_class == "FLEX"
    error_message = "FLEX on G.1X is allowed."
  }
}

run "rejects_queuing_with_retries_which_glue_does_not_queue" {
  command = plan

  variables {
    max_retries = 1
  }

  expect_failures = [aws_glue_job.this]
}

run "rejects_queuing_with_flex" {
  command = plan

  variables {
    execution_class = "FLEX"
  }

  expect_failures = [aws_glue_job.this]
}

run "retries_without_queuing_are_allowed" {
  command = plan

  variables {
    max_retries             = 1
    job_run_queuing_enabled = false
  }

  assert {
    condition     = aws_glue_job.this.max_retries == 1 && aws_glue_job.this.job_run_queuing_enabled == false
    error_message = "max_retries with queuing off is a combination Glue honours."
  }
}

run "spark_ui_logs_go_under_the_jobs_temp_prefix_the_role_may_write" {
  command = plan

  assert {
    condition = (
      aws_glue_job.this.default_arguments["--enable-spark-ui"] == "true" &&
      aws_glue_job.this.default_arguments["--spark-event-logs-path"] == "s3://gi-scripts/tmp/orders-load/spark-ui/"
    )
    error_message = "Spark UI event logs must be on, under <temp_dir>/spark-ui/."
  }

  assert {
    condition = anytrue([for st in jsondecode(aws_iam_role_policy.this.policy).Statement :
    st.Sid == "ReadWriteOwnPrefixes" && contains(flatten([st.Action]), "s3:PutObject") && contains(flatten([st.Resource]), "arn:aws:s3:::gi-scripts/tmp/orders-load/*")])
    error_message = "The role must be allowed to write the Spark UI event logs (the temp prefix)."
  }
}

run "auto_scaling_is_an_option" {
  command = plan

  variables {
    auto_scaling_enabled = true
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--enable-auto-scaling"] == "true"
    error_message = "auto_scaling_enabled must pass --enable-auto-scaling true."
  }
}

run "a_vpc_connection_gets_exactly_the_network_interface_permissions_glue_needs" {
  command = plan

  variables {
    jdbc_credentials = {
      secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi/orders-AbCdEf"
      connection_names = ["gi-orders-db"]
    }
    vpc_network = { subnet_ids = ["subnet-0123456789abcdef0"], security_group_ids = ["sg-0123456789abcdef0"] }
  }

  assert {
    condition = anytrue([for st in jsondecode(aws_iam_role_policy.this.policy).Statement :
      st.Sid == "CreateRunNetworkInterfaces" && toset(flatten([st.Resource])) == toset([
        "arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-0123456789abcdef0",
        "arn:aws:ec2:eu-west-1:123456789012:security-group/sg-0123456789abcdef0",
        "arn:aws:ec2:eu-west-1:123456789012:network-interface/*",
    ])])
    error_message = "CreateNetworkInterface must name the connection's subnet, security group and this account's interfaces only."
  }

  assert {
    condition = anytrue([for st in jsondecode(aws_iam_role_policy.this.policy).Statement :
    st.Sid == "TagRunNetworkInterfaces" && try(st.Condition["ForAllValues:StringEquals"]["aws:TagKeys"], []) == ["aws-glue-service-resource"]])
    error_message = "The role may only tag interfaces with Glue's own tag key."
  }

  assert {
    condition = anytrue([for st in jsondecode(aws_iam_role_policy.this.policy).Statement :
    st.Sid == "ReadJdbcSecret" && flatten([st.Resource]) == ["arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi/orders-AbCdEf"]])
    error_message = "The role reads exactly the pipeline's secret."
  }
}

run "no_network_permissions_without_a_vpc_connection" {
  command = plan

  assert {
    condition     = alltrue([for st in jsondecode(aws_iam_role_policy.this.policy).Statement : !anytrue([for a in flatten([st.Action]) : startswith(a, "ec2:")])])
    error_message = "A job without vpc_network must not get any ec2: permission."
  }
}

run "a_team_package_joins_extra_py_files_and_only_that_object_is_readable" {
  variables {
    extra_py_files = ["s3://gi-scripts/releases/0123456789abcdef/teams_orders.zip"]
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--extra-py-files"] == "s3://gi-scripts/releases/0123456789abcdef/glue_incremental.zip,s3://gi-scripts/releases/0123456789abcdef/teams_orders.zip"
    error_message = "The team's package must follow the library in --extra-py-files."
  }

  assert {
    condition     = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Resource if s.Sid == "ReadExtraPythonPackages"]) == ["arn:aws:s3:::gi-scripts/releases/0123456789abcdef/teams_orders.zip"]
    error_message = "The role must read exactly the declared package object."
  }
}

run "without_team_packages_extra_py_files_is_the_library_alone" {
  assert {
    condition     = aws_glue_job.this.default_arguments["--extra-py-files"] == "s3://gi-scripts/releases/0123456789abcdef/glue_incremental.zip" && length([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ReadExtraPythonPackages"]) == 0
    error_message = "No package: --extra-py-files is the library and no package grant exists."
  }
}

run "rejects_a_package_that_is_not_an_s3_zip_or_wheel" {
  command = plan

  variables {
    extra_py_files = ["s3://gi-scripts/packages/teams_orders.tar.gz"]
  }

  expect_failures = [var.extra_py_files]
}

run "a_slow_run_is_announced_after_notify_delay_after_minutes" {
  variables {
    notify_delay_after = 90
  }

  assert {
    condition     = aws_glue_job.this.notification_property[0].notify_delay_after == 90
    error_message = "The job must ask Glue for a delay notification after notify_delay_after minutes."
  }
}

run "rejects_a_delay_threshold_that_is_not_whole_minutes" {
  command = plan

  variables {
    notify_delay_after = 0.5
  }

  expect_failures = [var.notify_delay_after]
}

run "catalog_table_adds_the_argument_and_glue_permissions_on_exactly_that_table" {
  variables {
    catalog_table = {
      account_id = "123456789012"
      region     = "eu-west-1"
      database   = "gi_lake"
      table      = "orders"
    }
  }

  assert {
    condition     = aws_glue_job.this.default_arguments["--catalog_table"] == "gi_lake.orders"
    error_message = "catalog_table must become --catalog_table database.table."
  }

  assert {
    condition = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "ParquetTargetCatalogTable"]).Action == ["glue:GetTable", "glue:UpdateTable"] && contains(
      flatten([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s.Resource if s.Sid == "ParquetTargetCatalogTable"]),
      "arn:aws:glue:eu-west-1:123456789012:table/gi_lake/orders",
    )
    error_message = "The role may read and update exactly the target's catalog table."
  }
}

run "rejects_a_catalog_table_that_is_not_a_glue_name" {
  command = plan

  variables {
    catalog_table = {
      account_id = "123456789012"
      region     = "eu-west-1"
      database   = "gi_lake"
      table      = "Orders-EU"
    }
  }

  expect_failures = [var.catalog_table]
}

run "bookmarks_under_a_cse_kms_key_are_encrypted_as_the_role" {
  variables {
    kms_key_arns         = ["arn:aws:kms:eu-west-1:123456789012:key/1111aaaa-2222-bbbb-3333-cccc4444dddd"]
    bookmark_kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/1111aaaa-2222-bbbb-3333-cccc4444dddd"
  }

  assert {
    condition = one([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : s if s.Sid == "EncryptBookmarks"]) == {
      Sid      = "EncryptBookmarks", Effect = "Allow", Action = ["kms:Encrypt"]
      Resource = ["arn:aws:kms:eu-west-1:123456789012:key/1111aaaa-2222-bbbb-3333-cccc4444dddd"]
    }
    error_message = "Glue encrypts CSE-KMS bookmarks as the job's role: it needs kms:Encrypt on exactly the bookmark key."
  }
}

run "no_bookmark_key_no_kms_encrypt" {
  variables {
    kms_key_arns = ["arn:aws:kms:eu-west-1:123456789012:key/1111aaaa-2222-bbbb-3333-cccc4444dddd"]
  }

  assert {
    condition     = !anytrue([for s in jsondecode(aws_iam_role_policy.this.policy).Statement : contains(flatten([s.Action]), "kms:Encrypt")])
    error_message = "Without a bookmark key the role must not get kms:Encrypt."
  }
}

run "rejects_a_bookmark_key_the_role_cannot_decrypt_with" {
  command = plan

  variables {
    bookmark_kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/1111aaaa-2222-bbbb-3333-cccc4444dddd"
  }

  expect_failures = [aws_iam_role_policy.this]
}
