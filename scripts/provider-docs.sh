#!/usr/bin/env bash
# provider-docs.sh regenerates the Terraform provider's documentation
# (terraform/provider/docs) with terraform-plugin-docs from the provider's
# schema, as the provider built by `make build` reports it through the
# filesystem mirror. With -check it fails when the committed docs differ.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tfplugindocs=github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs@v0.24.0
terraform=${HARVEST_STACK_BIN:-$root/.cache/stack/bin}/terraform
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/main.tf" <<'TF'
terraform {
  required_providers {
    harvest = { source = "harvest-platform/harvest" }
  }
}
TF
export TF_CLI_CONFIG_FILE=$root/bin/terraform.rc CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
"$terraform" -chdir="$work" init -input=false -no-color >/dev/null
# tfplugindocs looks the schema up by the short name (or under hashicorp/)
"$terraform" -chdir="$work" providers schema -json |
	sed -E 's#"registry\.(terraform\.io|opentofu\.org)/harvest-platform/harvest"#"harvest"#' >"$work/schema.json"

out=$root/terraform/provider/docs
if [ "${1:-}" = -check ]; then
	cp -r "$root/terraform/provider" "$work/provider"
	out=$work/provider/docs
	dir=$work/provider
else
	dir=$root/terraform/provider
fi
(cd "$root" && go run $tfplugindocs generate --provider-dir "$dir" --provider-name harvest \
	--rendered-provider-name Harvest --providers-schema "$work/schema.json" >/dev/null)
if [ "${1:-}" = -check ]; then
	if ! diff -ru "$root/terraform/provider/docs" "$out"; then
		echo "provider docs are stale: run make provider-docs" >&2
		exit 1
	fi
	echo "provider docs: up to date"
else
	echo "provider docs: written to terraform/provider/docs"
fi
