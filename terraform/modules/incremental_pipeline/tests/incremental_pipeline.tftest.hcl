mock_provider "aws" {
  source = "../../testing/aws"
}

variables {
  name_prefix                 = "gi-test"
  release                     = "00000000000000aa"
  deletion_protection_enabled = true
  scripts_bucket_name         = "gi-test-scripts"
  runbook_base_url            = "https://runbooks.example.com/glue-incremental/runbook.md"

  pipelines = {
    orders = {
      kind             = "load"
      schedule         = "cron(15 * * * ? *)"
      source           = { uri = "s3://gi-test-lake/raw/orders/", format = "json" }
      watermark_column = "updated_at"
      primary_key      = ["order_id"]
      target = {
        path       = "s3://gi-test-lake/curated/orders"
        columns    = [{ name = "order_id", type = "bigint" }, { name = "customer_id", type = "bigint" }]
        partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
      }
      arguments = { "--lookback" = "1 hour" }
    }
    customers = {
      kind             = "load"
      schedule         = "cron(0 * * * ? *)"
      source           = { uri = "jdbc:postgresql://db:5432/shop", table = "public.customers" }
      watermark_column = "updated_at"
      primary_key      = ["customer_id"]
      target           = { path = "s3://gi-test-lake/curated/customers/" }
      secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
      connections      = ["gi-test-shop"]
      network          = { subnet_ids = ["subnet-0123456789abcdef0"], security_group_ids = ["sg-0123456789abcdef0"] }
    }
    orders_enriched = {
      kind = "join"
      join = {
        left  = { pipeline = "orders" }
        right = { pipeline = "customers" }
        keys  = ["customer_id"]
        type  = "left"
      }
      target = {
        path       = "s3://gi-test-lake/curated/orders_enriched/"
        partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
      }
    }
  }

  alarms = {
    schedule_period_seconds         = 3600
    watermark_lag_threshold_seconds = 10800
  }

  oncall_subscriptions = [{ protocol = "email", endpoint = "oncall@example.com" }]
}

run "a_join_side_naming_a_pipeline_reads_its_target_and_committed_state" {
  command = plan

  assert {
    condition     = module.job["orders_enriched"].default_arguments["--upstream_jobs"] == "left=gi-test-orders,right=gi-test-customers"
    error_message = "--upstream_jobs must be derived from the sides: side=<upstream job>."
  }

  assert {
    condition     = module.job["orders_enriched"].default_arguments["--left_path"] == "s3://gi-test-lake/curated/orders/" && module.job["orders_enriched"].default_arguments["--right_path"] == "s3://gi-test-lake/curated/customers/"
    error_message = "A side naming a pipeline must read that pipeline's target path."
  }

  assert {
    condition     = jsonencode(output.pipelines["orders_enriched"].read_s3_uris) == jsonencode(["s3://gi-test-lake/curated/orders/", "s3://gi-test-lake/curated/customers/"])
    error_message = "The join's role must be granted exactly the sides' paths."
  }

  assert {
    condition     = jsonencode(output.pipelines["orders_enriched"].upstreams) == jsonencode(["customers", "orders"])
    error_message = "The join's upstreams are the pipelines its sides name."
  }
}

run "loads_get_their_arguments_from_the_typed_fields" {
  command = plan

  assert {
    condition = (
      module.job["orders"].default_arguments["--source_format"] == "json" &&
      module.job["orders"].default_arguments["--primary_key"] == "order_id" &&
      module.job["orders"].default_arguments["--partition_by"] == "order_date" &&
      module.job["orders"].default_arguments["--target_path"] == "s3://gi-test-lake/curated/orders/" &&
      module.job["orders"].default_arguments["--lookback"] == "1 hour"
    )
    error_message = "The load's arguments must come from source, keys, target and arguments."
  }

  assert {
    condition     = module.job["customers"].default_arguments["--source_table"] == "public.customers" && !contains(keys(module.job["customers"].default_arguments), "--source_format")
    error_message = "A JDBC load passes --source_table and no --source_format."
  }

  assert {
    condition     = length(output.pipelines["customers"].read_s3_uris) == 0 && jsonencode(output.pipelines["orders"].read_s3_uris) == jsonencode(["s3://gi-test-lake/raw/orders/"])
    error_message = "A load's role reads its S3 source, and nothing for a JDBC source."
  }
}

run "roots_run_on_their_schedule_and_dependents_on_a_conditional_trigger" {
  command = plan

  assert {
    condition     = keys(module.triggers[0].scheduled_trigger_names) == ["gi-test-customers-schedule", "gi-test-orders-schedule"]
    error_message = "Each pipeline without upstreams must get its own scheduled trigger."
  }

  assert {
    condition     = keys(module.triggers[0].conditional_trigger_names) == ["gi-test-orders-enriched-after-upstreams"]
    error_message = "A pipeline with upstreams must be started by a conditional trigger."
  }
}

run "every_target_is_a_catalog_table_with_projected_partitions" {
  command = plan

  assert {
    condition     = aws_glue_catalog_database.this.name == "gi_test" && length(aws_glue_catalog_table.target) == 3
    error_message = "One catalog database per environment, one table per target."
  }

  assert {
    condition = (
      aws_glue_catalog_table.target["orders"].parameters["projection.enabled"] == "true" &&
      aws_glue_catalog_table.target["orders"].parameters["projection.order_date.type"] == "date" &&
      aws_glue_catalog_table.target["orders"].parameters["projection.order_date.format"] == "yyyy-MM-dd" &&
      aws_glue_catalog_table.target["orders"].storage_descriptor[0].location == "s3://gi-test-lake/curated/orders/" &&
      aws_glue_catalog_table.target["orders"].partition_keys[0].name == "order_date"
    )
    error_message = "A partitioned target's table must project its partitions and point at the target path."
  }

  assert {
    condition     = module.job["orders"].default_arguments["--catalog_table"] == "gi_test.orders" && module.job["orders_enriched"].default_arguments["--catalog_table"] == "gi_test.orders_enriched"
    error_message = "A Parquet load and a join name their catalog table (--catalog_table): a run adds the columns a schema change brings."
  }

  assert {
    condition     = aws_athena_workgroup.this[0].configuration[0].enforce_workgroup_configuration && aws_athena_workgroup.this[0].configuration[0].result_configuration[0].encryption_configuration[0].encryption_option == "SSE_S3"
    error_message = "The Athena workgroup must enforce its encrypted results location."
  }
}

run "every_pipeline_is_alarmed_with_the_runbook_and_on_the_dashboard" {
  command = plan

  assert {
    condition     = keys(output.alarm_names) == ["customers", "orders", "orders_enriched"] && alltrue([for a in values(output.alarm_names) : length(setsubtract(["zero_records", "missed_run", "watermark_stale", "late_files", "null_watermarks", "future_watermarks", "metric_publish_failures"], keys(a))) == 0])
    error_message = "Each pipeline must have its zero-record, missed-run, stale-watermark, late-file, null/future-watermark and metric-publish-failure alarms."
  }

  assert {
    condition     = endswith(module.alarms["orders"].alarm_descriptions.zero_records, "Runbook: https://runbooks.example.com/glue-incremental/runbook.md#zero-records")
    error_message = "Alarm descriptions must link the alarm's runbook section."
  }

  assert {
    condition     = length(aws_cloudwatch_dashboard.this) == 1 && length(flatten(local.dashboard_rows)) == 4 * 3
    error_message = "The dashboard holds the alarm widget and four widgets per pipeline."
  }
}

run "a_pipeline_overrides_the_environment_alarm_tuning" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 6 * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
        alarms           = { schedule_period_seconds = 86400, zero_records_evaluation_periods = 2 }
      }
    }
  }

  assert {
    condition     = local.alarm_tuning["orders"].schedule_period_seconds == 86400 && local.alarm_tuning["orders"].zero_records_evaluation_periods == 2 && local.alarm_tuning["orders"].watermark_lag_threshold_seconds == 10800
    error_message = "A pipeline's alarm overrides must replace only the fields it sets."
  }
}

# --- invalid maps --------------------------------------------------------------

run "rejects_an_unknown_upstream" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        upstreams        = ["payments"]
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "rejects_a_dependency_cycle" {
  command = plan

  variables {
    pipelines = {
      a = {
        kind             = "load"
        upstreams        = ["c"]
        source           = { uri = "s3://gi-test-lake/raw/a/" }
        watermark_column = "updated_at"
        primary_key      = ["id"]
        target           = { path = "s3://gi-test-lake/curated/a/" }
      }
      b = {
        kind             = "load"
        upstreams        = ["a"]
        source           = { uri = "s3://gi-test-lake/raw/b/" }
        watermark_column = "updated_at"
        primary_key      = ["id"]
        target           = { path = "s3://gi-test-lake/curated/b/" }
      }
      c = {
        kind = "join"
        join = { left = { pipeline = "a" }, right = { pipeline = "b" }, keys = ["id"] }
        target = {
          path       = "s3://gi-test-lake/curated/c/"
          partitions = [{ name = "day" }]
        }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "rejects_two_pipelines_writing_one_target" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
      }
      orders_again = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders_v2/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders" }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "rejects_a_join_side_naming_a_join" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
      }
      enriched = {
        kind   = "join"
        join   = { left = { pipeline = "orders" }, right = { path = "s3://gi-test-lake/raw/customers/" }, keys = ["customer_id"] }
        target = { path = "s3://gi-test-lake/curated/enriched/", partitions = [{ name = "order_date" }] }
      }
      twice_enriched = {
        kind   = "join"
        join   = { left = { pipeline = "enriched" }, right = { path = "s3://gi-test-lake/raw/regions/" }, keys = ["region_id"] }
        target = { path = "s3://gi-test-lake/curated/twice/", partitions = [{ name = "order_date" }] }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "rejects_a_configured_upstream_jobs_argument" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
        arguments        = { "--upstream_jobs" = "left=something-else" }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "an_iceberg_load_pipeline_writes_its_table_through_the_glue_jobs_iceberg_target" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/", format = "json" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { format = "iceberg", path = "s3://gi-test-lake/iceberg/" }
      }
      customers = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/customers/", format = "json" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
      }
    }
  }

  assert {
    condition = (
      module.job["orders"].default_arguments["--target_format"] == "iceberg" &&
      module.job["orders"].default_arguments["--target_table"] == "gi_test.orders" &&
      module.job["orders"].default_arguments["--datalake-formats"] == "iceberg" &&
      strcontains(module.job["orders"].default_arguments["--conf"], "warehouse=s3://gi-test-lake/iceberg/") &&
      !contains(keys(module.job["orders"].default_arguments), "--target_path")
    )
    error_message = "An Iceberg load pipeline must pass its table to glue_job's iceberg_target, and no --target_path."
  }

  assert {
    condition     = keys(aws_glue_catalog_table.target) == ["customers"]
    error_message = "The job creates an Iceberg target's table: the module registers a Parquet table only for Parquet targets."
  }

  assert {
    condition     = !contains(keys(module.job["customers"].default_arguments), "--target_format")
    error_message = "A Parquet pipeline keeps the default target format."
  }
}

run "rejects_an_iceberg_join_output_not_wired_yet" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
      }
      enriched = {
        kind   = "join"
        join   = { left = { pipeline = "orders" }, right = { path = "s3://gi-test-lake/raw/c/" }, keys = ["id"] }
        target = { format = "iceberg", path = "s3://gi-test-lake/iceberg/", partitions = [{ name = "day" }] }
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_join_side_naming_an_iceberg_pipeline" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { format = "iceberg", path = "s3://gi-test-lake/iceberg/" }
      }
      enriched = {
        kind   = "join"
        join   = { left = { pipeline = "orders" }, right = { path = "s3://gi-test-lake/raw/c/" }, keys = ["id"] }
        target = { path = "s3://gi-test-lake/curated/enriched/", partitions = [{ name = "day" }] }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "rejects_a_join_side_naming_a_pipeline_with_history" {
  command = plan

  variables {
    pipelines = {
      customers = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/customers/", format = "json" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        history          = {}
        target           = { path = "s3://gi-test-lake/curated/customers/", columns = [{ name = "customer_id", type = "bigint" }, { name = "updated_at", type = "timestamp" }] }
      }
      enriched = {
        kind   = "join"
        join   = { left = { path = "s3://gi-test-lake/raw/orders/" }, right = { pipeline = "customers" }, keys = ["customer_id"] }
        target = { path = "s3://gi-test-lake/curated/enriched/", partitions = [{ name = "day" }] }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "a_load_asking_for_notifications_gets_its_queue_and_the_job_reads_it" {
  command = plan

  variables {
    pipelines = merge(var.pipelines, {
      orders = merge(var.pipelines.orders, {
        source = { uri = "s3://gi-test-lake/raw/orders/", format = "json", notifications = true }
      })
    })
  }

  assert {
    condition     = module.job["orders"].default_arguments["--discovery"] == "notifications"
    error_message = "A pipeline with source.notifications must run with --discovery notifications."
  }

  assert {
    condition     = module.source_notifications["orders"].filter_prefix == "raw/orders/"
    error_message = "The bucket notification must cover the pipeline's source prefix."
  }

  assert {
    condition     = keys(module.source_notifications) == ["orders"] && keys(aws_iam_role_policy.source_notifications) == ["orders"]
    error_message = "Only the pipeline asking for notifications gets a queue and the role policy for it."
  }

  assert {
    condition     = !contains(keys(module.job["customers"].default_arguments), "--discovery")
    error_message = "Other pipelines keep the default discovery (listing)."
  }
}

run "notifications_for_a_jdbc_source_are_refused" {
  command = plan

  variables {
    pipelines = merge(var.pipelines, {
      customers = merge(var.pipelines.customers, {
        source = { uri = "jdbc:postgresql://db:5432/shop", table = "public.customers", notifications = true }
      })
    })
  }

  expect_failures = [var.pipelines]
}

run "two_notifying_pipelines_on_one_bucket_are_refused" {
  command = plan

  variables {
    pipelines = merge(var.pipelines, {
      orders = merge(var.pipelines.orders, {
        source = { uri = "s3://gi-test-lake/raw/orders/", format = "json", notifications = true }
      })
      returns = merge(var.pipelines.orders, {
        source = { uri = "s3://gi-test-lake/raw/returns/", format = "json", notifications = true }
        target = merge(var.pipelines.orders.target, { path = "s3://gi-test-lake/curated/returns/" })
      })
    })
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "a_jdbc_pipeline_reads_exactly_its_secret_and_connection" {
  assert {
    condition = (
      module.job["customers"].default_arguments["--source_secret_id"] == "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf" &&
      !contains(keys(module.job["customers"].default_arguments), "--connection_name")
    )
    error_message = "The JDBC pipeline's job must read its credentials from its secret; the connection is its network path only."
  }

  assert {
    condition = anytrue([for st in jsondecode(module.job["customers"].role_policy_json).Statement :
    st.Sid == "ReadJdbcSecret" && flatten([st.Resource]) == ["arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"]])
    error_message = "The JDBC pipeline's role must read exactly its secret."
  }

  assert {
    condition = anytrue([for st in jsondecode(module.job["customers"].role_policy_json).Statement :
    st.Sid == "CreateRunNetworkInterfaces" && contains(flatten([st.Resource]), "arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-0123456789abcdef0")])
    error_message = "The JDBC pipeline's role must be allowed the network interfaces of its VPC connection."
  }

  assert {
    condition     = alltrue([for st in jsondecode(module.job["orders"].role_policy_json).Statement : !contains(["ReadJdbcSecret", "CreateRunNetworkInterfaces"], st.Sid)])
    error_message = "A file pipeline's role gets no secret and no network permission."
  }
}

run "a_jdbc_source_without_credentials_is_refused" {
  command = plan

  variables {
    pipelines = {
      shop = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "jdbc:postgresql://db:5432/shop", table = "public.customers" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "a_secret_on_a_file_pipeline_is_refused" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
        secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "created_keys_encrypt_table_scripts_data_and_logs_and_only_the_jobs_use_them" {
  variables {
    encryption = {
      create_keys            = true
      key_users              = { scripts = ["arn:aws:iam::123456789012:role/gi-test-deploy"] }
      security_configuration = { create = true }
    }
  }

  assert {
    condition     = keys(module.key) == ["data", "scripts", "table"] && length(module.logs_key) == 1
    error_message = "create_keys must create the data, table, scripts and logs keys."
  }

  assert {
    condition = (
      toset(one([for s in jsondecode(module.key["data"].policy_json).Statement : s.Condition.ArnEquals["aws:PrincipalArn"] if s.Sid == "RolesUseKey"])) ==
      toset([for k in ["customers", "orders", "orders-enriched", "-analyst", "-oncall"] : "arn:aws:iam::123456789012:role/glue-gi-test-${k}"])
    )
    error_message = "The data key must be usable by exactly the jobs' roles, the analysts' (Athena reads the targets as them) and the on-call's (target, a Parquet rewind's restore)."
  }

  assert {
    condition     = contains(one([for s in jsondecode(module.key["table"].policy_json).Statement : s.Condition.ArnEquals["aws:PrincipalArn"] if s.Sid == "RolesUseKey"]), "arn:aws:iam::123456789012:role/glue-gi-test--oncall")
    error_message = "The on-call role must be able to use the table key (status, watermarks)."
  }

  assert {
    condition     = contains(one([for s in jsondecode(module.key["scripts"].policy_json).Statement : s.Condition.ArnEquals["aws:PrincipalArn"] if s.Sid == "RolesUseKey"]), "arn:aws:iam::123456789012:role/gi-test-deploy")
    error_message = "key_users.scripts (the CI deploy role) must be able to use the scripts key."
  }

  assert {
    condition     = module.watermarks_table.kms_key_arn == module.key["table"].arn
    error_message = "The watermarks table must be encrypted with the table key."
  }

  assert {
    condition = (
      aws_glue_security_configuration.this[0].encryption_configuration[0].s3_encryption[0].s3_encryption_mode == "SSE-KMS" &&
      aws_glue_security_configuration.this[0].encryption_configuration[0].job_bookmarks_encryption[0].job_bookmarks_encryption_mode == "CSE-KMS"
    )
    error_message = "The security configuration must encrypt S3 writes (SSE-KMS) and bookmarks (CSE-KMS) with the data key."
  }

  assert {
    condition     = alltrue([for k, j in module.job : j.security_configuration == "gi-test-jobs" && j.log_kms_key_arn == module.logs_key[0].arn])
    error_message = "Every job must run under the security configuration and log to groups encrypted with the logs key."
  }

  assert {
    condition = alltrue([for k, j in module.job : anytrue([for st in jsondecode(j.role_policy_json).Statement :
    st.Sid == "UseDataKeys" && toset(flatten([st.Resource])) == toset([module.key["data"].arn, module.key["table"].arn, module.key["scripts"].arn])])])
    error_message = "Each job role's kms: grant must name exactly the data, table and scripts keys."
  }
}

run "a_transform_and_a_custom_script_get_their_arguments_and_exactly_their_grants" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(15 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/", format = "json" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/", partitions = [{ name = "day" }] }
        transform        = { function = "teams_orders.masks:mask_pii", package = "teams_orders.zip" }
      }
      daily_revenue = {
        kind    = "custom"
        script  = "aggregate_daily_revenue"
        sources = { orders = { pipeline = "orders", upstream_argument = "upstream_job" } }
        target  = { path = "s3://gi-test-lake/marts/daily_revenue/", partitions = [{ name = "day" }] }
      }
    }
  }

  assert {
    condition     = module.job["orders"].default_arguments["--transform"] == "teams_orders.masks:mask_pii" && module.job["orders"].run_arguments["--extra-py-files"] == "s3://gi-test-scripts/releases/00000000000000aa/glue_incremental.zip,s3://gi-test-scripts/releases/00000000000000aa/teams_orders.zip"
    error_message = "A transform sets --transform and ships its package, from the same release, after the library in --extra-py-files."
  }

  assert {
    condition     = contains(jsondecode(aws_iam_role_policy.releases["orders"].policy).Statement[0].Resource, "arn:aws:s3:::gi-test-scripts/releases/*/teams_orders.zip")
    error_message = "The job role reads its package in any release, so a switch needs no apply."
  }

  assert {
    condition     = output.pipelines["daily_revenue"].script == "aggregate_daily_revenue" && output.pipelines["daily_revenue"].arguments["--orders_path"] == "s3://gi-test-lake/curated/orders/" && output.pipelines["daily_revenue"].arguments["--upstream_job"] == "gi-test-orders" && output.pipelines["daily_revenue"].arguments["--target_path"] == "s3://gi-test-lake/marts/daily_revenue/"
    error_message = "A custom source naming a pipeline passes that pipeline's target and job name to the script; the target is --target_path."
  }

  assert {
    condition     = jsonencode(output.pipelines["daily_revenue"].read_s3_uris) == jsonencode(["s3://gi-test-lake/curated/orders/"]) && jsonencode(output.pipelines["daily_revenue"].write_s3_uris) == jsonencode(["s3://gi-test-lake/marts/daily_revenue/"]) && jsonencode(output.pipelines["daily_revenue"].upstreams) == jsonencode(["orders"])
    error_message = "A custom pipeline reads exactly its sources, writes exactly its target, and its sources' pipelines are its upstreams."
  }

  assert {
    condition     = keys(module.triggers[0].conditional_trigger_names) == ["gi-test-daily-revenue-after-upstreams"] && keys(module.triggers[0].scheduled_trigger_names) == ["gi-test-orders-schedule"]
    error_message = "A custom pipeline downstream of a load is started by a conditional trigger."
  }
}

run "rejects_a_custom_pipeline_without_a_script_or_sources" {
  command = plan

  variables {
    pipelines = {
      daily_revenue = {
        kind     = "custom"
        schedule = "cron(0 * * * ? *)"
        target   = { path = "s3://gi-test-lake/marts/daily_revenue/" }
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_custom_source_with_both_a_path_and_a_pipeline" {
  command = plan

  variables {
    pipelines = {
      daily_revenue = {
        kind     = "custom"
        schedule = "cron(0 * * * ? *)"
        script   = "aggregate_daily_revenue"
        sources  = { orders = { path = "s3://gi-test-lake/curated/orders/", pipeline = "orders" } }
        target   = { path = "s3://gi-test-lake/marts/daily_revenue/" }
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_transform_that_is_not_module_colon_function" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(15 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/", format = "json" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
        transform        = { function = "teams_orders.masks.mask_pii", package = "teams_orders.zip" }
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_transform_argument_set_by_hand_without_its_package" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(15 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/", format = "json" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders/" }
        arguments        = { "--transform" = "teams_orders.masks:mask_pii" }
      }
    }
  }

  expect_failures = [terraform_data.pipeline_graph]
}

run "every_job_runs_script_and_library_of_one_release_and_names_it" {
  command = plan

  variables {
    release = "0123456789abcdef"
  }

  assert {
    condition = (
      local.script_locations["orders"] == "s3://gi-test-scripts/releases/0123456789abcdef/incremental_load.py" &&
      local.script_locations["orders_enriched"] == "s3://gi-test-scripts/releases/0123456789abcdef/incremental_join.py" &&
      local.library_locations["orders_enriched"] == "s3://gi-test-scripts/releases/0123456789abcdef/glue_incremental.zip"
    )
    error_message = "A job's script and library must both come from releases/<release>/."
  }

  assert {
    condition     = alltrue([for k in ["orders", "customers", "orders_enriched"] : module.job[k].default_arguments["--release"] == "0123456789abcdef"])
    error_message = "Every job must name its release in --release (the run summary and the Runs metric carry it)."
  }

  assert {
    condition     = jsonencode(sort(keys(aws_iam_role_policy.releases))) == jsonencode(["customers", "orders", "orders_enriched"])
    error_message = "Each job's role must read its script and the library in any release, so a switch needs no apply."
  }
}

run "rejects_a_release_that_is_not_a_deploy_id" {
  command = plan

  variables {
    release = "v1.2.3"
  }

  expect_failures = [var.release]
}

run "rejects_a_pipeline_release_that_is_not_a_deploy_id" {
  command = plan

  variables {
    pipelines = {
      orders = {
        kind             = "load"
        schedule         = "cron(15 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/orders/" }
        watermark_column = "updated_at"
        primary_key      = ["order_id"]
        target           = { path = "s3://gi-test-lake/curated/orders" }
        release          = "NOT-HEX"
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "with_events_orchestration_a_dependent_starts_on_its_upstreams_success_and_has_no_conditional_trigger" {
  command = plan

  variables {
    orchestration = "events"
  }

  assert {
    condition     = length(module.triggers[0].conditional_trigger_names) == 0 && length(module.triggers[0].scheduled_trigger_names) == 2
    error_message = "With events, the roots keep their schedules and no conditional trigger starts a dependent twice."
  }

  assert {
    condition     = keys(module.event_chain[0].rule_names) == ["gi-test-orders-enriched"]
    error_message = "The join must be started by the event chain when its upstreams succeed."
  }
}

run "a_custom_pipeline_reads_a_jdbc_table_with_exactly_its_secret_connection_and_network" {
  variables {
    pipelines = {
      payments_labelled = {
        kind     = "custom"
        schedule = "cron(0 * * * ? *)"
        script   = "label_payments"
        sources = {
          payments = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payments" }
          methods  = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payment_methods" }
        }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        secret_arn  = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
        connections = ["gi-test-shop"]
        network     = { subnet_ids = ["subnet-0123456789abcdef0"], security_group_ids = ["sg-0123456789abcdef0"] }
      }
    }
  }

  assert {
    condition = (
      output.pipelines["payments_labelled"].arguments["--payments_url"] == "jdbc:postgresql://db:5432/shop" &&
      output.pipelines["payments_labelled"].arguments["--payments_table"] == "public.payments" &&
      output.pipelines["payments_labelled"].arguments["--methods_table"] == "public.payment_methods" &&
      !contains(keys(output.pipelines["payments_labelled"].arguments), "--payments_path")
    )
    error_message = "A custom JDBC source arrives as --<name>_url and --<name>_table, with no --<name>_path."
  }

  assert {
    condition = (
      module.job["payments_labelled"].default_arguments["--source_secret_id"] == "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf" &&
      !contains(keys(module.job["payments_labelled"].default_arguments), "--connection_name")
    )
    error_message = "The custom JDBC pipeline reads its credentials from its secret; the connection is its network path only."
  }

  assert {
    condition = anytrue([for st in jsondecode(module.job["payments_labelled"].role_policy_json).Statement :
    st.Sid == "ReadJdbcSecret" && flatten([st.Resource]) == ["arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"]])
    error_message = "The custom JDBC pipeline's role must read exactly its secret."
  }

  assert {
    condition = anytrue([for st in jsondecode(module.job["payments_labelled"].role_policy_json).Statement :
    st.Sid == "ReadOwnConnections" && contains(flatten([st.Resource]), "arn:aws:glue:eu-west-1:123456789012:connection/gi-test-shop")])
    error_message = "The custom JDBC pipeline's role must get exactly its connection."
  }

  assert {
    condition = anytrue([for st in jsondecode(module.job["payments_labelled"].role_policy_json).Statement :
    st.Sid == "CreateRunNetworkInterfaces" && contains(flatten([st.Resource]), "arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-0123456789abcdef0")])
    error_message = "The custom JDBC pipeline's role must be allowed the network interfaces of its VPC connection."
  }

  assert {
    condition     = length(output.pipelines["payments_labelled"].read_s3_uris) == 0 && jsonencode(output.pipelines["payments_labelled"].write_s3_uris) == jsonencode(["s3://gi-test-lake/curated/payments_labelled/"])
    error_message = "A custom pipeline reading only JDBC sources reads no S3 path and writes exactly its target."
  }
}

run "a_custom_jdbc_pipeline_with_one_connection_logs_in_through_it" {
  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payments" }, methods = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payment_methods" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  assert {
    condition     = module.job["payments_labelled"].default_arguments["--connection_name"] == "gi-test-shop" && !contains(keys(module.job["payments_labelled"].default_arguments), "--source_secret_id")
    error_message = "Without a secret, the custom JDBC pipeline logs in through its one connection."
  }

  assert {
    condition     = alltrue([for st in jsondecode(module.job["payments_labelled"].role_policy_json).Statement : !contains(["ReadJdbcSecret", "CreateRunNetworkInterfaces"], st.Sid)])
    error_message = "Without secret_arn and network, the role gets no secret and no network permission."
  }
}

run "rejects_a_custom_jdbc_source_without_credentials" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind     = "custom"
        schedule = "cron(0 * * * ? *)"
        script   = "label_payments"
        sources  = { payments = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payments" } }
        target   = { path = "s3://gi-test-lake/curated/payments_labelled/" }
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_secret_on_a_custom_pipeline_without_a_jdbc_source" {
  command = plan

  variables {
    pipelines = {
      daily_revenue = {
        kind       = "custom"
        schedule   = "cron(0 * * * ? *)"
        script     = "aggregate_daily_revenue"
        sources    = { orders = { path = "s3://gi-test-lake/curated/orders/" } }
        target     = { path = "s3://gi-test-lake/marts/daily_revenue/" }
        secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_password_in_a_custom_jdbc_uri" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "jdbc:postgresql://db:5432/shop?user=etl&password=hunter2", table = "public.payments" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_password_in_a_jdbc_load_uri" {
  command = plan

  variables {
    pipelines = {
      shop = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "jdbc:postgresql://etl:hunter2@db:5432/shop", table = "public.customers" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
        secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_custom_jdbc_source_without_a_table" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "jdbc:postgresql://db:5432/shop" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_custom_source_with_both_a_jdbc_uri_and_a_path" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payments", path = "s3://gi-test-lake/raw/payments/" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_file_format_on_a_custom_jdbc_source" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payments", format = "parquet" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_custom_source_uri_that_is_not_jdbc" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "s3://gi-test-lake/raw/payments/", table = "public.payments" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_several_connections_without_a_secret" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payments" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop", "gi-test-shop-replica"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_custom_source_named_target" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { target = { uri = "jdbc:postgresql://db:5432/shop", table = "public.payments" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_custom_jdbc_table_the_job_cannot_parse" {
  command = plan

  variables {
    pipelines = {
      payments_labelled = {
        kind        = "custom"
        schedule    = "cron(0 * * * ? *)"
        script      = "label_payments"
        sources     = { payments = { uri = "jdbc:postgresql://db:5432/shop", table = "shop.public.payments.v2" } }
        target      = { path = "s3://gi-test-lake/curated/payments_labelled/" }
        connections = ["gi-test-shop"]
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_a_jdbc_load_table_that_is_a_query" {
  command = plan

  variables {
    pipelines = {
      shop = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "jdbc:postgresql://db:5432/shop", table = "(select * from customers) c" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
        secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "accepts_quoted_and_three_part_jdbc_tables" {
  command = plan

  variables {
    pipelines = {
      shop = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "jdbc:postgresql://db:5432/shop", table = "shop.\"Sales Schema\".customers$1" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
        secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
      }
    }
  }
}

run "every_event_target_parks_undelivered_events_in_its_own_modules_dead_letter_queue" {
  command = plan

  variables {
    orchestration = "events"
  }

  assert {
    condition     = { for k, a in module.alarms : k => a.dead_letter_queue_name } == { orders = "gi-test-orders-event-dead-letters", customers = "gi-test-customers-event-dead-letters", orders_enriched = "gi-test-orders-enriched-event-dead-letters" }
    error_message = "Each pipeline's page rules park undelivered events in that pipeline's own queue (adding a pipeline changes no other)."
  }

  assert {
    condition     = module.event_chain[0].dead_letter_queue_name == "gi-test-start-dependents-dead-letters"
    error_message = "The dependents' rules park undelivered StartExecutions in the event chain's queue."
  }
}

run "without_failure_events_a_pipeline_has_no_dead_letter_queue" {
  command = plan

  variables {
    failure_events_enabled = false
  }

  assert {
    condition     = alltrue([for a in module.alarms : a.dead_letter_queue_name == null])
    error_message = "No rule, no queue (a queue policy cannot admit an empty list of rules)."
  }
}

run "a_pipeline_naming_a_network_runs_through_its_created_connection" {
  command = plan

  variables {
    networks = {
      shop = {
        vpc_id            = "vpc-0123456789abcdef0"
        subnet_id         = "subnet-0123456789abcdef0"
        availability_zone = "eu-west-1a"
        route_table_ids   = ["rtb-0123456789abcdef0"]
        database          = { port = 5432, cidr_blocks = ["10.20.30.0/24"] }
      }
    }
    pipelines = {
      customers = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "jdbc:postgresql://db:5432/shop", table = "public.customers" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
        secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
        network_name     = "shop"
      }
    }
  }

  assert {
    condition     = jsonencode(output.pipelines["customers"].connections) == jsonencode(["gi-test-shop"]) && module.network["shop"].connection_name == "gi-test-shop"
    error_message = "The pipeline's job runs through the NETWORK connection modules/glue_network creates for its network."
  }

  assert {
    condition     = module.job["customers"].default_arguments["--source_secret_id"] == "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf" && !contains(keys(module.job["customers"].default_arguments), "--connection_name")
    error_message = "The credentials come from the secret; the NETWORK connection is the path only."
  }
}

run "rejects_a_network_name_without_a_secret" {
  command = plan

  variables {
    pipelines = {
      customers = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "jdbc:postgresql://db:5432/shop", table = "public.customers" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
        connections      = ["gi-test-shop-login"]
        network_name     = "shop"
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "rejects_an_unknown_network_name" {
  command = plan

  variables {
    pipelines = {
      customers = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "jdbc:postgresql://db:5432/shop", table = "public.customers" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        target           = { path = "s3://gi-test-lake/curated/customers/" }
        secret_arn       = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gi-test/shop-AbCdEf"
        network_name     = "warehouse"
      }
    }
  }

  expect_failures = [terraform_data.pipeline_networks]
}

run "a_history_load_passes_its_options_and_its_table_gains_the_version_columns" {
  command = plan

  variables {
    pipelines = {
      customers = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/customers/", format = "json" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        history          = { columns = ["segment", "tier"] }
        target = {
          path    = "s3://gi-test-lake/curated/customers/"
          columns = [{ name = "customer_id", type = "bigint" }, { name = "updated_at", type = "timestamp" }]
        }
      }
    }
  }

  assert {
    condition = (
      module.job["customers"].default_arguments["--history"] == "scd2" &&
      module.job["customers"].default_arguments["--history_columns"] == "segment,tier"
    )
    error_message = "A history load passes --history scd2 and its tracked columns."
  }

  assert {
    condition     = [for c in aws_glue_catalog_table.target["customers"].storage_descriptor[0].columns : "${c.name}:${c.type}"] == ["customer_id:bigint", "updated_at:timestamp", "valid_from:timestamp", "valid_to:timestamp", "is_current:boolean"]
    error_message = "A history target's catalog table has the version columns, bounds typed as the watermark."
  }
}

run "a_history_load_into_iceberg_passes_its_options_and_registers_no_parquet_table" {
  command = plan

  variables {
    pipelines = {
      customers = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/customers/" }
        watermark_column = "updated_at"
        primary_key      = ["customer_id"]
        history          = {}
        target           = { format = "iceberg", path = "s3://gi-test-lake/iceberg/" }
      }
    }
  }

  assert {
    condition = (
      module.job["customers"].default_arguments["--history"] == "scd2" &&
      module.job["customers"].default_arguments["--target_format"] == "iceberg" &&
      !contains(keys(module.job["customers"].default_arguments), "--history_columns")
    )
    error_message = "A history load into Iceberg passes --history scd2 and its Iceberg target."
  }

  assert {
    condition     = length(aws_glue_catalog_table.target) == 0
    error_message = "The job creates the Iceberg history table (its version columns included): no Parquet table."
  }
}

run "rejects_history_on_a_join_pipeline" {
  command = plan

  variables {
    pipelines = {
      a = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/a/" }
        watermark_column = "updated_at"
        primary_key      = ["id"]
        target           = { path = "s3://gi-test-lake/curated/a/" }
      }
      b = {
        kind             = "load"
        schedule         = "cron(0 * * * ? *)"
        source           = { uri = "s3://gi-test-lake/raw/b/" }
        watermark_column = "updated_at"
        primary_key      = ["id"]
        target           = { path = "s3://gi-test-lake/curated/b/" }
      }
      c = {
        kind    = "join"
        join    = { left = { pipeline = "a" }, right = { pipeline = "b" }, keys = ["id"] }
        history = {}
        target  = { path = "s3://gi-test-lake/curated/c/" }
      }
    }
  }

  expect_failures = [var.pipelines]
}

run "the_oncall_reads_the_state_it_is_given_and_only_that_object" {
  command = plan

  variables {
    oncall_state = { bucket = "example-terraform-state-prod", key = "glue-incremental/prod/terraform.tfstate" }
  }

  assert {
    condition = {
      for st in jsondecode(aws_iam_role_policy.oncall.policy).Statement : st.Sid => st.Resource if contains(["ListEnvironmentState", "ReadEnvironmentState"], st.Sid)
      } == {
      ListEnvironmentState = "arn:aws:s3:::example-terraform-state-prod"
      ReadEnvironmentState = "arn:aws:s3:::example-terraform-state-prod/glue-incremental/prod/terraform.tfstate"
    }
    error_message = "status --env reads the environment's outputs: the on-call lists and reads that state object only."
  }

  assert {
    condition     = !anytrue([for st in jsondecode(aws_iam_role_policy.oncall.policy).Statement : st.Sid == "DecryptEnvironmentStateThroughS3"])
    error_message = "No state key named: no kms:Decrypt for it."
  }
}

run "rejects_an_oncall_state_key_with_a_leading_slash" {
  command = plan

  variables {
    oncall_state = { bucket = "example-terraform-state-prod", key = "/glue-incremental/prod/terraform.tfstate" }
  }

  expect_failures = [var.oncall_state]
}
