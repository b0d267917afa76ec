# terraform test -var-file=dev.tfvars -filter=tests/dev.tftest.hcl
mock_provider "aws" {
  source = "../../testing/aws"
}

run "dev_watermarks_table_can_be_torn_down" {
  command = plan

  assert {
    condition     = var.environment == "dev" && output.watermarks_table_deletion_protection_enabled == false
    error_message = "dev is disposable: deletion protection stays off so the environment can be destroyed."
  }
}

run "dev_alarms_are_looser_than_prod" {
  command = plan

  assert {
    condition     = var.alarms.zero_records_evaluation_periods > 1 && var.alarms.watermark_lag_threshold_seconds > 3 * 3600
    error_message = "dev alarms should tolerate a missed or empty run before paging."
  }
}

run "dev_has_a_dependency_chain_of_three_pipelines" {
  command = plan

  assert {
    condition     = length(output.pipelines) >= 3 && length(output.pipelines["orders_enriched"].upstreams) == 2
    error_message = "dev carries at least three pipelines, two loads feeding a join."
  }
}
