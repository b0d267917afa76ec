terraform {
  required_version = ">= 1.7"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.65, < 6.0" # 5.65: aws_glue_job.job_run_queuing_enabled
    }
  }
}
