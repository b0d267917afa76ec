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
# Workers take modules longest first, in the order tests/harness/schedule.py gives them.
TEST_WORKERS ?= 3
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=25

.PHONY: help setup test test-rest test-fast test-deep lint lint-checks fmt docs demo demo-clean up apply down status bench bench-smoke deploy

# `make help` prints each target's `## ` line: one line per target, kept next to the target.
help: ## this list
	@echo "Start here: make setup && make demo   (prerequisites: README.md#prerequisites)"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  make \1\t/' | expand -t 22

setup: ## check the prerequisites, then install everything else (idempotent)
	@scripts/setup.sh

lint: setup lint-checks ## ruff, ruff format, mypy, import contracts, terraform fmt and docs, actionlint, shellcheck

lint-checks:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	cd lib && ../$(VENV)/bin/lint-imports --config ../pyproject.toml --no-cache
	terraform fmt -check -recursive terraform
	$(PY) scripts/terraform_docs.py --check
	$(PY) scripts/type_budget.py --check
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/actionlint .github/workflows/*.yml
	$(VENV)/bin/shellcheck scripts/*.sh

fmt: setup ## format Python and Terraform in place
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .
	terraform fmt -recursive terraform

# The Inputs/Outputs tables of terraform/*/README.md, between their BEGIN_TF_DOCS markers.
docs: setup ## regenerate the Terraform READMEs' inputs/outputs tables from the .tf files
	$(PY) scripts/terraform_docs.py

# Lint runs beside the tests (its output follows theirs): either failing fails `make test`.
test: setup ## lint, and a test of each guarantee: unit, integration, terraform (~15 min from a fresh clone)
	@mkdir -p build; $(MAKE) --no-print-directory lint-checks > build/lint.log 2>&1 & lint=$$!; \
	$(PYTEST) tests --ignore=tests/benchmarks --junitxml=build/test-report.xml; tests=$$?; \
	wait $$lint; linted=$$?; cat build/lint.log; \
	if [ $$linted -ne 0 ]; then echo "make test: lint failed (its output is above)" >&2; fi; \
	exit $$(( tests | linted ))

# What `make test` leaves out (tests/harness/deep.py): the guides walked end to end, the
# LocalStack apply, the IAM evaluation, the crash sweeps, each second test of a guarantee.
test-rest: setup ## what make test leaves out, at its sizes: guides end to end, IAM, sweeps (~40 min; CI runs it)
	GLUE_INCREMENTAL_TESTS=rest $(PYTEST) tests --ignore=tests/benchmarks --junitxml=build/test-rest-report.xml

test-fast: setup ## the tests without Terraform and end to end (minutes)
	$(PYTEST) tests --ignore=tests/benchmarks -m "not terraform and not e2e"

test-deep: setup ## the central properties over 200+ histories, crashes at every step
	HYPOTHESIS_PROFILE=deep $(PYTEST) tests -m deep --ignore=tests/benchmarks

demo: setup ## the whole platform on this machine, step by step, then cleaned up
	$(PY) -m glue_incremental demo

demo-clean: setup ## remove what a `make demo` left behind (.demo/)
	$(PY) -m glue_incremental demo --clean-only

bench: setup ## benchmarks -> tests/benchmarks/results/ (~40 min)
	$(PY) -m tests.benchmarks.run

bench-smoke: setup ## the benchmarks at tiny scales (a smoke test)
	$(PY) -m tests.benchmarks.run --smoke

up: setup ## start the local environment in the background (make down stops it)
	$(PY) -m glue_incremental up

apply: setup ## re-apply terraform/environments/local to the running stack, keeping its data
	$(PY) -m glue_incremental apply

down: ## stop the local environment that make up started
	@if [ -x $(PY) ]; then $(PY) -m glue_incremental down; fi

status: ## one table of every pipeline of ENV (default local)
	$(PY) -m glue_incremental status --env $(ENV)

# Deploy needs the virtualenv only (CI installs nothing else): not the whole setup.
deploy: ## upload scripts and library to ENV's bucket and verify the jobs (ENV=dev)
	@GLUE_INCREMENTAL_SETUP_ONLY=venv scripts/setup.sh
	$(PY) -m glue_incremental deploy --env $(ENV)
