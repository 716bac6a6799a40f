#!/usr/bin/env bash
# Regenerates the plugins' gRPC code from plugins/*/proto/*.proto with
# Debian's protoc and pinned Go generators (make proto). The generated files
# are committed; run this after changing a .proto.
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1

if ! command -v protoc >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "proto: installing protobuf-compiler from apt"
		apt-get install -y protobuf-compiler >/dev/null || { apt-get update >/dev/null && apt-get install -y protobuf-compiler >/dev/null; }
	else
		echo "proto: protoc is missing: install protobuf-compiler" >&2
		exit 1
	fi
fi
include=/usr/include
[ -f "$include/google/protobuf/timestamp.proto" ] || { echo "proto: $include/google/protobuf/timestamp.proto is missing (libprotobuf-dev)" >&2; exit 1; }

tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
for tool in "$PROTOC_GEN_GO" "$PROTOC_GEN_GO_GRPC"; do GOBIN=$tools GOFLAGS= go install "$tool"; done

# protoc names each file by its path under the include root, and the Go
# protobuf registry refuses two files of one name in a binary: Nomad's own
# plugins/base/proto/base.proto is linked into the harvest driver, which
# also links the SDK. So the files are compiled (and import each other) under
# the module path, github.com/harvest-platform/harvest/plugins/..., through
# a symlink, and the module option writes the code back beside them.
module=$(go list -m)
mkdir -p "$tools/src/$(dirname "$module")"
ln -s "$PWD" "$tools/src/$module"

for f in plugins/*/proto/*.proto; do
	echo "proto: $f ($(protoc --version))"
	protoc -I "$tools/src" -I "$include" \
		--plugin=protoc-gen-go="$tools/protoc-gen-go" --go_out=. --go_opt=module="$module" \
		--plugin=protoc-gen-go-grpc="$tools/protoc-gen-go-grpc" --go-grpc_out=. --go-grpc_opt=module="$module" \
		"$module/$f"
done
