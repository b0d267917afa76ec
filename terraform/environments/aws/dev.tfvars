environment                 = "dev"
region                      = "eu-west-1"
name_prefix                 = "gi-dev"
watermarks_table_name       = "glue-watermarks-dev"
scripts_bucket_name         = "example-gi-dev-scripts"
deletion_protection_enabled = false

pipelines = {
  orders = {
    kind             = "load"
    schedule         = "cron(0 6 * * ? *)"
    source           = { uri = "s3://example-gi-dev-lake/raw/orders/", format = "parquet" }
    watermark_column = "updated_at"
    primary_key      = ["order_id"]
    arguments        = { "--lookback" = "1 hour" }
    target = {
      path = "s3://example-gi-dev-lake/curated/orders/"
      columns = [
        { name = "order_id", type = "bigint" },
        { name = "customer_id", type = "bigint" },
        { name = "amount", type = "decimal(12,2)" },
        { name = "updated_at", type = "timestamp" },
      ]
      partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
    }
  }

  customers = {
    kind             = "load"
    schedule         = "cron(0 6 * * ? *)"
    source           = { uri = "s3://example-gi-dev-lake/raw/customers/", format = "json" }
    watermark_column = "updated_at"
    primary_key      = ["customer_id"]
    arguments        = { "--lookback" = "1 hour", "--partition_moves" = "ignore" }
    target = {
      path = "s3://example-gi-dev-lake/curated/customers/"
      columns = [
        { name = "customer_id", type = "bigint" },
        { name = "name", type = "string" },
        { name = "updated_at", type = "timestamp" },
      ]
    }
  }

  # A JDBC load from the shop database: credentials from its Secrets Manager
  # secret, network path through its Glue connection in the database's VPC.
  payments = {
    kind             = "load"
    schedule         = "cron(30 6 * * ? *)"
    source           = { uri = "jdbc:postgresql://shop-db.dev.example.internal:5432/shop", table = "public.payments" }
    watermark_column = "updated_at"
    primary_key      = ["payment_id"]
    arguments        = { "--lookback" = "1 hour" }
    secret_arn       = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:gi-dev/shop-db-AbCdEf"
    connections      = ["gi-dev-shop-db"]
    network          = { subnet_ids = ["subnet-0a1b2c3d4e5f60718"], security_group_ids = ["sg-0a1b2c3d4e5f60718"] }
    target = {
      path = "s3://example-gi-dev-lake/curated/payments/"
      columns = [
        { name = "payment_id", type = "bigint" },
        { name = "order_id", type = "bigint" },
        { name = "amount", type = "decimal(12,2)" },
        { name = "updated_at", type = "timestamp" },
      ]
    }
  }

  # A custom job on the same database (glue_scripts/label_payments.py): payments read by
  # their watermark, labelled from the payment_methods lookup table read whole; the
  # credentials, connection and network, and so the role's grants, as for the JDBC load.
  payments_labelled = {
    kind     = "custom"
    schedule = "cron(45 6 * * ? *)"
    script   = "label_payments"
    sources = {
      payments = { uri = "jdbc:postgresql://shop-db.dev.example.internal:5432/shop", table = "public.payments" }
      methods  = { uri = "jdbc:postgresql://shop-db.dev.example.internal:5432/shop", table = "public.payment_methods" }
    }
    secret_arn  = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:gi-dev/shop-db-AbCdEf"
    connections = ["gi-dev-shop-db"]
    network     = { subnet_ids = ["subnet-0a1b2c3d4e5f60718"], security_group_ids = ["sg-0a1b2c3d4e5f60718"] }
    target = {
      path = "s3://example-gi-dev-lake/curated/payments_labelled/"
      columns = [
        { name = "payment_id", type = "bigint" },
        { name = "method_id", type = "bigint" },
        { name = "amount", type = "decimal(12,2)" },
        { name = "updated_at", type = "timestamp" },
        { name = "label", type = "string" },
      ]
    }
  }

  # Runs when both loads SUCCEEDED; reads their targets and committed states.
  orders_enriched = {
    kind = "join"
    join = {
      left  = { pipeline = "orders" }
      right = { pipeline = "customers" }
      keys  = ["customer_id"]
      type  = "left"
    }
    target = {
      path = "s3://example-gi-dev-lake/curated/orders_enriched/"
      columns = [
        { name = "customer_id", type = "bigint" },
        { name = "order_id", type = "bigint" },
        { name = "amount", type = "decimal(12,2)" },
        { name = "name", type = "string" },
      ]
      partitions = [{ name = "order_date", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
    }
  }

  # Daily revenue per customer from orders (glue_scripts/aggregate_daily_revenue.py),
  # recomputing only the days each orders run touched; triggered by orders' success.
  daily_revenue = {
    kind      = "custom"
    script    = "aggregate_daily_revenue"
    sources   = { orders = { pipeline = "orders", upstream_argument = "upstream_job" } }
    arguments = { "--day_column" = "order_date", "--amount_type" = "decimal(12,2)" }
    target = {
      path       = "s3://example-gi-dev-lake/marts/daily_revenue/"
      partitions = [{ name = "day", type = "date", projection = "date", range = "2020-01-01,NOW", format = "yyyy-MM-dd" }]
    }
  }
}

# Daily loads at 06:00 UTC (dev only needs fresh-enough data to test against).
alarms = {
  schedule_period_seconds = 86400
  # Two days: one missed dev run is not worth a page.
  watermark_lag_threshold_seconds = 172800
  missed_run_grace_seconds        = 7200
  zero_records_evaluation_periods = 2
}

# Customer managed keys for the lake, the watermarks table, the scripts bucket and
# the job logs, used by exactly the jobs' roles; S3 writes and bookmarks under a Glue
# security configuration. The CI publish role is a scripts key user by itself
# (scripts_writer_role_arns); add operators' roles to key_users.table.
encryption = {
  create_keys            = true
  security_configuration = { create = true }
}

oncall_subscriptions = [
  { protocol = "email", endpoint = "data-platform-dev@example.com" },
]

# The state dev.backend.hcl names (the same bucket and key): the on-call role reads its
# outputs for `status --env dev` (docs/runbook.md).
state = {
  bucket = "example-terraform-state-dev"
  key    = "glue-incremental/dev/terraform.tfstate"
}
