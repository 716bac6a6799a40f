#!/usr/bin/env bash
# dist.sh builds release archives of every Harvest binary (make dist):
# dist/harvest_<version>_<os>_<arch>.tar.gz for each platform, each holding
# the binaries, README.md, CHANGELOG.md, docs/ (its Markdown), jobs/ (the
# platform's Nomad jobs and ACL policies), and
# dist/SHA256SUMS over them.
#   DIST_PLATFORMS  platforms to build (default "linux/amd64 linux/arm64")
#   DIST_PRERELEASE the version's pre-release label (default: version.go's, "dev"; empty for a release)
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^\tVersion = "\(.*\)"/\1/p' internal/version/version.go)
pre=${DIST_PRERELEASE-$(sed -n 's/^\tPrerelease = "\(.*\)"/\1/p' internal/version/version.go)}
full=$version${pre:+-$pre}
commit=$(git rev-parse --short HEAD 2>/dev/null || true)
pkg=github.com/harvest-platform/harvest/internal/version
ldflags="-s -w -X $pkg.GitCommit=$commit -X $pkg.Prerelease=$pre"
binaries=(harvest-driver harvest-placer harvest-blob harvest-sim harvestctl terraform-provider-harvest
	harvest-usage-prometheus harvest-import-prometheus)
platforms=${DIST_PLATFORMS:-linux/amd64 linux/arm64}
rm -rf dist && mkdir -p dist
for platform in $platforms; do
	os=${platform%/*} arch=${platform#*/}
	name=harvest_${full}_${os}_${arch}
	dir=dist/$name
	mkdir -p "$dir"
	for b in "${binaries[@]}"; do
		echo "dist: $name/$b"
		CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$dir/$b" "./cmd/$b"
	done
	cp README.md CHANGELOG.md "$dir/"
	mkdir -p "$dir/docs" && cp docs/*.md "$dir/docs/"
	# the platform's jobs and policies, as docs/install.md runs them
	mkdir -p "$dir/jobs" && cp -r jobs/*.nomad.hcl jobs/README.md jobs/acl jobs/examples "$dir/jobs/"
	tar -C dist -czf "dist/$name.tar.gz" "$name"
	rm -rf "$dir"
done
(cd dist && sha256sum ./*.tar.gz | sed 's| \./| |' >SHA256SUMS)
echo "dist: $(ls dist | tr '\n' ' ')"
