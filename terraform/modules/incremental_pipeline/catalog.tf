# The Glue Data Catalog side: one database per environment, one table per
# target, and the Athena workgroup that queries them.
#
# Partitions are found by Athena partition projection, not registered: the
# table declares how partition values are formed (dates over a range, integer
# ranges, enumerations, or values injected by the query), so a partition the
# job publishes is queryable at once, with no BatchCreatePartition call that
# could fail after the commit, no extra IAM, and nothing to repair when a
# partition is removed. Readers that ignore projection (Spark through the Glue
# catalog) read the table's location, which is the target path itself.
resource "aws_glue_catalog_database" "this" {
  name        = local.database_name
  description = "glue_incremental targets of ${var.name_prefix}."
  tags        = var.tags
}

resource "aws_glue_catalog_table" "target" {
  # An Iceberg target's table is created by its job (an Iceberg table, not this Parquet one).
  for_each = { for k, p in var.pipelines : k => p if p.target.format != "iceberg" }

  name          = local.target_tables[each.key]
  database_name = aws_glue_catalog_database.this.name
  description   = "Target of pipeline ${each.key} (Glue job ${local.job_names[each.key]})."
  table_type    = "EXTERNAL_TABLE"

  parameters = merge(
    {
      EXTERNAL              = "TRUE"
      classification        = "parquet"
      "parquet.compression" = "SNAPPY"
    },
    length(each.value.target.partitions) == 0 ? {} : { "projection.enabled" = "true" },
    merge([
      for part in each.value.target.partitions : merge(
        { "projection.${part.name}.type" = part.projection },
        part.range == null ? {} : { "projection.${part.name}.range" = part.range },
        part.format == null ? {} : { "projection.${part.name}.format" = part.format },
        part.values == null ? {} : { "projection.${part.name}.values" = join(",", part.values) },
      )
    ]...),
  )

  dynamic "partition_keys" {
    for_each = each.value.target.partitions

    content {
      name = partition_keys.value.name
      type = partition_keys.value.type
    }
  }

  storage_descriptor {
    location      = local.target_paths[each.key]
    input_format  = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
    output_format = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"

    ser_de_info {
      serialization_library = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
      parameters            = { "serialization.format" = "1" }
    }

    dynamic "columns" {
      # A history target's rows are versions: the three columns it adds (docs/history.md).
      for_each = concat(each.value.target.columns, each.value.history == null ? [] : [
        { name = "valid_from", type = local.watermark_types[each.key] },
        { name = "valid_to", type = local.watermark_types[each.key] },
        { name = "is_current", type = "boolean" },
      ])

      content {
        name = columns.value.name
        type = columns.value.type
      }
    }
  }

  # Declared columns are the table's initial schema; after creation a load or a join
  # with --catalog_table adds the columns a schema change brings (catalog_schema.py),
  # which the next plan must not take away. A column declared later therefore reaches
  # the table through the job (its first run writing it), not through Terraform.
  lifecycle {
    ignore_changes = [storage_descriptor[0].columns]
  }
}

resource "aws_athena_workgroup" "this" {
  count = var.athena_workgroup_enabled ? 1 : 0

  name          = "${var.name_prefix}-analysts"
  description   = "Queries the ${local.database_name} catalog database; results encrypted under the scripts bucket's athena/ prefix."
  force_destroy = var.scripts_bucket_force_destroy
  tags          = var.tags

  configuration {
    enforce_workgroup_configuration    = true
    publish_cloudwatch_metrics_enabled = true

    result_configuration {
      output_location = "s3://${local.bucket}/athena/"

      encryption_configuration {
        encryption_option = local.scripts_key_arn == null ? "SSE_S3" : "SSE_KMS"
        kms_key_arn       = local.scripts_key_arn
      }
    }
  }
}
