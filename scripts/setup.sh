#!/usr/bin/env bash
# Checks the prerequisites it cannot install (Debian's apt-get, Python 3.11 and
# 3.13, Terraform, git) and names each one missing with how to get it; then
# installs everything else the project needs, idempotently: Debian packages, the
# Python virtualenv, a separate checkov virtualenv, the AWS emulators (LocalStack,
# DynamoDB Local, moto) with Spark's S3A jars, and the Terraform CLI config.
# SETUP_SKIP_VENV=1 leaves .venv alone (for worktrees that share one).
set -euo pipefail
cd "$(dirname "$0")/.."

# Some machines' pip configuration names index folders that do not exist; pip
# warns about each on every install. Only that noise is dropped.
quiet_pip() { "$@" 2> >(grep -v '^WARNING: Location' >&2); }

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
# uv installs from the same index as pip (PyPI), a few times faster than pip on a fresh
# clone (measured: .venv 46 s -> 27 s, .venv-localstack 56 s -> 15 s). It is pinned, and
# installed into .venv by pip; the other virtualenvs use that copy.
UV_VERSION=0.13.9
UV=.venv/bin/uv
uv_install() {  # uv_install VENV ARGS...: pip install into VENV's Python, through uv
  local venv=$1
  shift
  VIRTUAL_ENV="$PWD/$venv" "$UV" pip install -q --python "$venv/bin/python" "$@"
}
install_venv() {
  local stamp
  stamp=.venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)-uv$UV_VERSION
  if [ ! -f "$stamp" ] && [ "${SETUP_SKIP_VENV:-0}" != 1 ]; then
    echo "setup: creating .venv with $($PYTHON --version)"
    [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
    quiet_pip .venv/bin/pip install -q "uv==$UV_VERSION"
    uv_install .venv --upgrade pip
    # pyspark is an sdist: uv rebuilds it (~25 s) whenever the index answers its download
    # as modified, as this machine's does. A wheel uv built earlier is tried first, offline
    # (the pin is exact); the install below resolves everything else online as before.
    uv_install .venv --offline "$(grep -m1 -o 'pyspark==[0-9.]*' pyproject.toml)" 2>/dev/null || true
    uv_install .venv -e '.[dev]'
    rm -f .venv/.installed-*
    touch "$stamp"
  fi
}
# GLUE_INCREMENTAL_SETUP_ONLY=venv: the virtualenv alone (make deploy needs nothing else).
if [ "${GLUE_INCREMENTAL_SETUP_ONLY:-}" = venv ]; then
  install_venv
  exit 0
fi

# -- prerequisites: what this script cannot install, each named with how to get it ----------------
python_at_least() { "$1" -c "import sys; assert sys.version_info >= ($2)" >/dev/null 2>&1; }
prerequisites_missing=()
need() { prerequisites_missing+=("$1"); }
{ command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; } \
  || need "Debian or Ubuntu (apt-get, dpkg-query): setup installs PostgreSQL, Java 17 and npm with apt-get"
python_at_least "${PYTHON:-python3.11}" "3, 11" || python_at_least python3 "3, 11" \
  || need "Python 3.11 (the Glue 5.1 runtime's): apt-get install python3.11 python3.11-venv, or pyenv install 3.11; PYTHON=/path/to/python3.11 to choose one"
python_at_least "${LOCALSTACK_PYTHON:-python3.13}" "3, 13" \
  || python_at_least "${PYENV_ROOT:-$HOME/.pyenv}/versions/3.13.0/bin/python" "3, 13" \
  || need "Python 3.13 (LocalStack's): pyenv install 3.13, or a python3.13 package; LOCALSTACK_PYTHON=/path/to/python3.13 to choose one"
if ! command -v terraform >/dev/null; then
  need "Terraform >= 1.10 (the roots lock their S3 state natively): https://developer.hashicorp.com/terraform/install (the AWS provider comes from a local mirror when /opt/tf-plugins exists, see scripts/terraformrc.sh, else from the registry)"
elif [[ ! "$(terraform version -json 2>/dev/null)" =~ \"terraform_version\":\ *\"(1\.([1-9][0-9])|[2-9])\. ]]; then
  need "Terraform >= 1.10 (found $(terraform version 2>/dev/null | head -1)): https://developer.hashicorp.com/terraform/install"
fi
command -v git >/dev/null || need "git: apt-get install git"
if [ "${#prerequisites_missing[@]}" -gt 0 ]; then
  echo "setup: missing prerequisites (install them, then run make setup again):" >&2
  printf '  - %s\n' "${prerequisites_missing[@]}" >&2
  exit 1
fi
[ "${GLUE_INCREMENTAL_SETUP_ONLY:-}" = prerequisites ] && { echo "setup: prerequisites ok"; exit 0; }

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

# Iceberg for local Spark (AWS Glue 5.1 ships it natively): the Spark runtime jar
# comes from a PyPI wheel; its relocated Jackson classes are built from the Jackson
# jars pyspark ships (scripts/relocate_jar.py). Both checksums are verified.
ICEBERG_RUNTIME_JAR="iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
ICEBERG_RUNTIME_SHA256=5b30080c7bbbced0fb0900894b7ea0200b1bbb2e4c355ebe727baafaf49c16f6
ICEBERG_JACKSON_JAR="iceberg-shaded-jackson-2.15.2.jar"
ICEBERG_JACKSON_SHA256=fc59376dc8a1af279311683a6200f997da6a233a7ea49c8df13d06cc34357cf2
verify_sha256() { echo "$2  $1" | sha256sum --check --status || { echo "setup: checksum mismatch for $1" >&2; rm -f "$1"; return 1; }; }
install_iceberg_jars() {
  local jars=build/jars pyspark_jars
  mkdir -p "$jars"
  if [ ! -f "$jars/$ICEBERG_RUNTIME_JAR" ] || ! verify_sha256 "$jars/$ICEBERG_RUNTIME_JAR" "$ICEBERG_RUNTIME_SHA256"; then
    echo "setup: extracting $ICEBERG_RUNTIME_JAR from snowpark-connect-deps-iceberg"
    local tmp; tmp=$(mktemp -d)
    quiet_pip .venv/bin/pip download -q --no-deps 'snowpark-connect-deps-iceberg==1.0.3' -d "$tmp"
    .venv/bin/python - "$tmp" "$ICEBERG_RUNTIME_JAR" <<'PY'
import glob, shutil, sys, zipfile
tmp, jar = sys.argv[1:]
with zipfile.ZipFile(glob.glob(f"{tmp}/snowpark_connect_deps_iceberg-1.0.3-*.whl")[0]) as wheel:
    with wheel.open(f"snowpark_connect_deps_iceberg/jars/{jar}") as src, open(f"{tmp}/{jar}", "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
    verify_sha256 "$tmp/$ICEBERG_RUNTIME_JAR" "$ICEBERG_RUNTIME_SHA256"
    mv "$tmp/$ICEBERG_RUNTIME_JAR" "$jars/"
    rm -rf "$tmp"
  fi
  if [ ! -f "$jars/$ICEBERG_JACKSON_JAR" ] || ! verify_sha256 "$jars/$ICEBERG_JACKSON_JAR" "$ICEBERG_JACKSON_SHA256"; then
    echo "setup: building $ICEBERG_JACKSON_JAR (Jackson relocated into org.apache.iceberg.shaded)"
    pyspark_jars=$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
    .venv/bin/python scripts/relocate_jar.py "$jars/$ICEBERG_JACKSON_JAR.tmp" \
      com.fasterxml.jackson org.apache.iceberg.shaded.com.fasterxml.jackson \
      "$pyspark_jars"/jackson-{core,databind,annotations,datatype-jsr310}-2.15.2.jar >/dev/null
    mv "$jars/$ICEBERG_JACKSON_JAR.tmp" "$jars/$ICEBERG_JACKSON_JAR"
    verify_sha256 "$jars/$ICEBERG_JACKSON_JAR" "$ICEBERG_JACKSON_SHA256"
  fi
}
# Local Spark sessions write file: paths through Hadoop's local file system, which runs the
# chmod program for every file and directory it creates (PySpark ships no native Hadoop
# library). tools/local-filesystem sets the permissions in the JVM instead
# (glue_incremental.spark.local_filesystem_jar): built here from its source with the JDK's
# javac against PySpark's Hadoop client, again only when the source changes. Without a JDK
# compiler, sessions keep Hadoop's own (slower, the same files).
LOCAL_FILESYSTEM_JAR=build/jars/local-filesystem.jar
build_local_filesystem_jar() {
  local source=tools/local-filesystem/src digest stamp classes hadoop_api
  stamp="$LOCAL_FILESYSTEM_JAR.source-sha256"
  digest=$(find "$source" -name '*.java' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
  if [ -f "$LOCAL_FILESYSTEM_JAR" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$digest" ]; then
    return 0
  fi
  if ! command -v javac >/dev/null || ! command -v jar >/dev/null; then
    echo "setup: warning: no javac and jar: local Spark writes run chmod per file (slower)" >&2
    return 0
  fi
  hadoop_api=$(.venv/bin/python -c 'import glob, os, pyspark; print(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "hadoop-client-api-*.jar"))[0])')
  classes=$(mktemp -d)
  find "$source" -name '*.java' -print0 | xargs -0 javac --release 17 -cp "$hadoop_api" -d "$classes"
  mkdir -p build/jars
  jar cf "$LOCAL_FILESYSTEM_JAR.tmp" -C "$classes" .
  rm -rf "$classes"
  mv "$LOCAL_FILESYSTEM_JAR.tmp" "$LOCAL_FILESYSTEM_JAR"
  echo "$digest" > "$stamp"
  echo "setup: local file system jar built ($LOCAL_FILESYSTEM_JAR)"
}

# Local Spark sessions map their classes from an archive a first JVM dumped (build/jvm/,
# glue_incremental.spark.class_data_archive): about half a short run's JVM time. Once per
# class path: a session with Iceberg (the tests', an Iceberg job's), and a local run of a
# job without it (the runner leaves Iceberg's jars off). A failure costs only the saving,
# so it warns and setup goes on. The two dumps run side by side (~45 s each, one JVM each).
build_one_class_data_archive() {
  local archive log
  log=$(mktemp)
  if archive=$(.venv/bin/python -c "from glue_incremental.spark import build_class_data_archive as b; print(b(iceberg=$1) or '')" 2>"$log"); then
    echo "setup: class-data archive ok${archive:+ ($archive)}"
  else
    echo "setup: warning: no class-data archive, local Spark starts slower: $(tail -1 "$log")" >&2
  fi
  rm -f "$log"
}
build_class_data_archive() {
  local with_iceberg
  build_one_class_data_archive True &
  with_iceberg=$!
  build_one_class_data_archive False
  wait "$with_iceberg"
}

# GLUE_INCREMENTAL_SETUP_ONLY=iceberg runs this section alone (the venv must exist).
if [ "${GLUE_INCREMENTAL_SETUP_ONLY:-}" = iceberg ]; then
  install_iceberg_jars
  echo "setup: iceberg jars ok"
  exit 0
fi

# checkov pins its own boto3/botocore range: a separate venv keeps the
# project's pins exactly those of the Glue runtime. It installs in the background,
# beside the jars and the emulators, with the uv that install_venv put in .venv.
install_venv
checkov_pid=""
checkov_log=$(mktemp)
CHECKOV_VERSION="${CHECKOV_VERSION:-3.3.30}"
# The stamp names the version: a new pin (or CHECKOV_VERSION) reinstalls.
checkov_stamp=.venv-checkov/.installed-$CHECKOV_VERSION
if [ ! -x .venv-checkov/bin/checkov ] || [ ! -f "$checkov_stamp" ]; then
  echo "setup: installing checkov $CHECKOV_VERSION into .venv-checkov (in the background)"
  (
    [ -x .venv-checkov/bin/python ] || "$PYTHON" -m venv .venv-checkov
    if [ -x "$UV" ]; then
      uv_install .venv-checkov "checkov==$CHECKOV_VERSION"
    else
      quiet_pip .venv-checkov/bin/pip install -q "checkov==$CHECKOV_VERSION"
    fi
    rm -f .venv-checkov/.installed-*
    touch "$checkov_stamp"
  ) > "$checkov_log" 2>&1 &
  checkov_pid=$!
fi

# LocalStack, DynamoDB Local and the IAM evaluator install beside the jars and the
# class-data dumps, which need the jars only (~15 s off a fresh clone's setup).
scripts/setup-aws-emulators.sh emulators &
emulators_pid=$!
install_iceberg_jars &
iceberg_pid=$!
scripts/setup-aws-emulators.sh s3a-jars
wait "$iceberg_pid" || { echo "setup: installing the Iceberg jars failed (output above)" >&2; exit 1; }
scripts/terraformrc.sh > /dev/null
build_local_filesystem_jar  # before the class-data archives: it is on their class path
build_class_data_archive
if ! wait "$emulators_pid"; then
  echo "setup: installing the AWS emulators failed (output above)" >&2
  exit 1
fi
if [ -n "$checkov_pid" ] && ! wait "$checkov_pid"; then
  cat "$checkov_log" >&2
  echo "setup: installing checkov into .venv-checkov failed (output above)" >&2
  rm -f "$checkov_log"
  exit 1
fi
rm -f "$checkov_log"
echo "setup: done"
