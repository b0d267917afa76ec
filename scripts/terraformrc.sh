#!/usr/bin/env bash
# Writes build/terraformrc: use the machine's local provider mirror when one
# exists (offline machines), the public registry otherwise. Prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
mirror="${TF_PROVIDER_MIRROR:-/opt/tf-plugins}"
out=build/terraformrc
if [ -d "$mirror/registry.terraform.io" ]; then
  cat > "$out" <<RC
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["registry.terraform.io/*/*"]
  }
  direct {
    exclude = ["registry.terraform.io/*/*"]
  }
}
RC
else
  printf '# no local provider mirror: terraform init uses the registry\n' > "$out"
fi
echo "$PWD/$out"
