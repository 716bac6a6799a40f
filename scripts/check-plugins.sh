#!/usr/bin/env bash
# Fails when the plugin SDK (every package under plugins/, tests included) or
# an example plugin built against it imports, directly or through another
# package, a Harvest package outside plugins/: plugins/ is what a third
# party builds a plugin against, so it must not drag in a component's
# internals (make check-plugins, part of make lint).
set -euo pipefail
cd "$(dirname "$0")/.."

module=$(go list -m)
sdk=("./plugins/..." "./cmd/harvest-usage-prometheus" "./cmd/harvest-import-prometheus")

bad=0
# For each package (and its test variants), every dependency in the module
# that is not under plugins/.
while read -r pkg deps; do
	for d in $deps; do
		case "$d" in
		"$module"/plugins | "$module"/plugins/* | "${pkg%.test}") ;;
		"$module" | "$module"/*)
			echo "check-plugins: $pkg depends on $d"
			bad=1
			;;
		esac
	done
done < <(go list -test -f '{{.ImportPath}} {{join .Deps " "}}' "${sdk[@]}" | sed 's/ \[[^]]*\]//g')

if [ "$bad" != 0 ]; then
	echo "check-plugins: plugins/ and the example plugins may import only plugins/ and third-party modules" >&2
	exit 1
fi
echo "check-plugins: plugins/ and the example plugins import nothing of Harvest outside plugins/"
