#!/usr/bin/env bash
# stack.sh builds the pinned real stack (Nomad, Consul, MinIO, mc and, when the
# machine has no terraform, OpenTofu as terraform) from the Go module proxy into
# a git-ignored cache keyed by version: .cache/stack/<name>-<version>/<name>. A binary already in the
# cache is reused; a build writes to a temporary name and is renamed only when it
# succeeds, so an interrupted build never leaves a broken binary behind.
#
# Usage: scripts/stack.sh [name ...]   (default: all)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${HARVEST_STACK_DIR:-$root/.cache/stack}
mkdir -p "$cache/bin"

# name | version (cache key) | package built from the wrapper module in stack/<name>
components=(
	"nomad|1.11.3|github.com/hashicorp/nomad"
	"consul|1.22.5|github.com/hashicorp/consul"
	"minio|0.0.0-20260212201848-7aac2a2c5b7c|github.com/minio/minio"
	"mc|0.0.0-20250313080218-cf909e1063a9|github.com/minio/mc"
	"terraform|opentofu-1.9.1|github.com/opentofu/opentofu/cmd/tofu"
)

wanted=("$@")
is_wanted() {
	[ ${#wanted[@]} -eq 0 ] && return 0
	local w
	for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
	return 1
}

# heartbeat prints elapsed time every 30 s while a build runs, so a cold build
# (minutes on two cores) never looks hung.
heartbeat() {
	local name=$1 start=$2
	while sleep 30; do
		printf 'stack:   %s still building (%ds)\n' "$name" $(($(date +%s) - start))
	done
}

build() {
	local name=$1 version=$2 pkg=$3
	local dir=$cache/$name-$version out=$cache/$name-$version/$name
	if [ -x "$out" ]; then
		printf 'stack: %-9s %s cached at %s\n' "$name" "$version" "$out"
	else
		if [ "$name" = terraform ] && command -v terraform >/dev/null 2>&1 && [ -z "${HARVEST_BUILD_TERRAFORM:-}" ]; then
			printf 'stack: %-9s using %s from PATH\n' "$name" "$(command -v terraform)"
			ln -sfn "$(command -v terraform)" "$cache/bin/terraform"
			return
		fi
		printf 'stack: %-9s %s building from the Go module proxy (cold: minutes)...\n' "$name" "$version"
		mkdir -p "$dir"
		local start hb
		start=$(date +%s)
		heartbeat "$name" "$start" &
		hb=$!
		if ! (cd "$root/stack/$name" && GOFLAGS=-mod=readonly go build -trimpath -o "$out.tmp" "$pkg"); then
			kill "$hb" 2>/dev/null || true
			rm -f "$out.tmp"
			echo "stack: building $name failed" >&2
			exit 1
		fi
		kill "$hb" 2>/dev/null || true
		wait "$hb" 2>/dev/null || true
		mv "$out.tmp" "$out"
		printf 'stack: %-9s built in %ds\n' "$name" $(($(date +%s) - start))
	fi
	ln -sfn "../$name-$version/$name" "$cache/bin/$name"
}

for c in "${components[@]}"; do
	IFS='|' read -r name version pkg <<<"$c"
	is_wanted "$name" && build "$name" "$version" "$pkg"
done
exit 0
