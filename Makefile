# Every target runs from a fresh clone: `make setup` installs what is missing.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV := .venv
PY := $(VENV)/bin/python
export TF_CLI_CONFIG_FILE := $(CURDIR)/build/terraformrc
export PYTHONDONTWRITEBYTECODE := 1
ENV ?= local
# Each pytest worker starts its own local AWS, PostgreSQL and SparkSession; modules that
# share an expensive fixture (a Terraform apply, the bench smoke run) stay on one worker.
# The 25 slowest tests are listed at the end: where to look when the suite grows.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=25

.PHONY: help setup test test-deep test-fast lint fmt demo demo-clean bench bench-smoke deploy tf-validate tf-test

help:
	@echo "make setup && make demo    install everything, run the demo on the embedded default"
	@echo "make test                   the whole suite (lint, python, terraform, end to end)"
	@echo "make test-deep              the central property over 200+ histories"
	@echo "make bench                  benchmarks -> tests/benchmarks/results/"
	@echo "make deploy ENV=dev         upload scripts + library to the environment's bucket"

setup:
	@scripts/setup.sh

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	terraform fmt -check -recursive terraform
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/actionlint .github/workflows/*.yml
	$(VENV)/bin/shellcheck scripts/*.sh

fmt: setup
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .
	terraform fmt -recursive terraform

test: setup lint
	$(PYTEST) tests --ignore=tests/benchmarks

test-fast: setup
	$(PYTEST) tests --ignore=tests/benchmarks -m "not terraform and not e2e"

test-deep: setup
	HYPOTHESIS_PROFILE=deep $(PYTEST) tests -k "property or sigkill or every_step" --ignore=tests/benchmarks

demo: setup
	$(PY) -m glue_incremental demo

demo-clean: setup
	$(PY) -m glue_incremental demo --clean-only

bench: setup
	$(PY) -m tests.benchmarks.run

bench-smoke: setup
	$(PY) -m tests.benchmarks.run --smoke

deploy: setup
	$(PY) -m glue_incremental deploy --env $(ENV)
