#!/usr/bin/env bash
# Creates the watermarks table with the library's key schema once LocalStack is
# ready, so the CLI works before `terraform apply` of environments/local.
set -euo pipefail
awslocal dynamodb describe-table --table-name glue-watermarks >/dev/null 2>&1 || \
  awslocal dynamodb create-table --table-name glue-watermarks \
    --attribute-definitions AttributeName=job_name,AttributeType=S AttributeName=sk,AttributeType=S \
    --key-schema AttributeName=job_name,KeyType=HASH AttributeName=sk,KeyType=RANGE \
    --billing-mode PAY_PER_REQUEST
