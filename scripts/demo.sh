#!/usr/bin/env bash
# demo.sh tells Harvest's whole story on a local cluster of real processes:
# it installs the platform by following docs/install.md literally (history
# import, credentials, `nomad job run` of the storage, blob and placer jobs,
# classes, a harvested job through the admission proxy, a dataset through
# S3), then makes a node's primary tenant spike and shows the harvest driver
# suppress and evict the youngest harvested task, Nomad move the work on,
# and `harvestctl explain alloc` say why. The cluster stays up afterwards;
# `make cluster-down` stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run_dir=${RUN_DIR:-$root/.run/cluster}
bin=$root/bin
step() { printf '\n==> %s\n' "$*"; }

if [ -f "$run_dir/cluster.json" ] && "$bin/harvest-dev" dev-cluster status -run-dir "$run_dir" >/dev/null 2>&1; then
	step "Reusing the cluster already running in $run_dir"
	"$bin/harvest-dev" dev-cluster status -run-dir "$run_dir"
else
	[ -f "$run_dir/cluster.json" ] && "$bin/harvest-dev" dev-cluster down -run-dir "$run_dir"
	step "Starting a cluster of agents only: Consul, a Nomad server, 3 Nomad clients with the harvest driver"
	"$bin/harvest-dev" dev-cluster up -bare -run-dir "$run_dir"
fi
# shellcheck disable=SC1091
source "$run_dir/env.sh"
export NOMAD_CLI_SHOW_HINTS=false
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "The tenants' monitoring export: a month of CPU for each node's primary tenant"
patterns=(periodic constant unpredictable)
synth=(-seed 11 -tenants 3 -days 30 -out "$work")
i=0
for tenant in $(nomad node status -t '{{range .}}{{.ID}} {{end}}' | xargs -n1 nomad node status -t '{{index .Meta "harvest_tenant"}}{{"\n"}}' | sort -u); do
	synth+=(-tenant "$tenant=${patterns[i % 3]}")
	i=$((i + 1))
done
"$bin/harvestctl" history synth "${synth[@]}" >/dev/null
echo "  $work/series.csv.gz (tenant,timestamp,cpu_percent every 2 minutes)"

step "Installing Harvest by following docs/install.md, every sh block as written"
port() { echo "${1##*:}"; }
export HARVEST_BIN=$bin HARVEST_JOBS=$root/jobs MINIO=$root/.cache/stack/bin/minio STORAGE_ROOT=$run_dir/storage \
	HISTORY_CSV=$work/series.csv.gz PLACER_PORT=$(port "$HARVEST_PLACER_ADDR") PROXY_PORT=$(port "$HARVEST_PROXY_ADDR") \
	S3_PORT=$(port "$HARVEST_BLOB_ADDR") BLOB_ADMIN_PORT=$(port "$HARVEST_BLOB_ADMIN_ADDR")
awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' "$root/docs/install.md" >"$work/install.sh"
# (deployment progress, which nomad job run prints again and again, left out)
(cd "$work" && bash -euo pipefail "$work/install.sh") 2>&1 |
	grep -vE '^\s*(Deployed|Task Group|(storage|front|placer) +[0-9].*|ID +=.*|Job (ID|Version) +=.*|Status +=.*|Description +=.*|[0-9-]+T[0-9:]+Z)\s*$|^\s*$' |
	sed 's/^/  /'

step "Three harvested tasks of a quarter core each on client-1, started one after another (straight to Nomad: the driver's part)"
node1=$(nomad node status -t '{{range .}}{{if eq .Name "client-1"}}{{.ID}}{{end}}{{end}}')
others=$(nomad node status -t '{{range .}}{{if ne .Name "client-1"}}{{.ID}} {{end}}{{end}}')
total=$(nomad node status -t '{{index .Attributes "cpu.totalcompute"}}' "$node1")
cores=$(nomad node status -t '{{index .Attributes "cpu.numcores"}}' "$node1")
mhz=$((total / cores / 4))
for n in $others; do nomad node eligibility -disable "$n" >/dev/null; done
reenable() { for n in $others; do nomad node eligibility -enable "$n" >/dev/null 2>&1 || true; done; }
trap 'reenable; rm -rf "$work"' EXIT
for i in 1 2 3; do
	cat >"$work/task$i.nomad.hcl" <<JOB
job "demo-harvest-$i" {
  type = "batch"
  meta {
    harvest = "true"
  }
  group "work" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts       = 3
      interval       = "1h"
      delay          = "5s"
      delay_function = "constant"
      unlimited      = false
    }
    task "work" {
      driver = "harvest"
      config {
        command = "/bin/sleep"
        args    = ["90"]
      }
      resources {
        cpu    = $mhz
        memory = 32
      }
    }
  }
}
JOB
	nomad job stop -purge "demo-harvest-$i" >/dev/null 2>&1 || true
	nomad job run -detach "$work/task$i.nomad.hcl" >/dev/null
	on=""
	for _ in $(seq 60); do
		on=$(nomad job allocs -t '{{range .}}{{if eq .ClientStatus "running"}}{{.NodeName}}{{end}}{{end}}' "demo-harvest-$i")
		[ -n "$on" ] && break
		sleep 0.5
	done
	[ "$on" = client-1 ] || { echo "demo-harvest-$i is not running on client-1 (${on:-not running}): nomad job status demo-harvest-$i" >&2; exit 1; }
	echo "  demo-harvest-$i running on client-1 ($mhz MHz)"
	sleep 1
done
reenable

step "client-1's primary tenant spikes to 0.6 cores: the driver suppresses, then evicts the youngest task"
"$bin/harvest-dev" dev-cluster spike -run-dir "$run_dir" -node client-1 -cores 0.6 -for 30s | sed -u 's/^/  /' &
spike=$!
evicted=""
for _ in $(seq 60); do
	evicted=$(nomad job allocs -t '{{range .}}{{if eq .ClientStatus "failed"}}{{.ID}}{{end}}{{end}}' demo-harvest-3 2>/dev/null || true)
	[ -n "$evicted" ] && break
	sleep 0.5
done
for i in 1 2 3; do
	nomad job allocs -t '{{range .}}  demo-harvest-'"$i"' {{printf "%.8s" .ID}} on {{.NodeName}}: {{.ClientStatus}}{{end}}' "demo-harvest-$i"
done
if [ -z "$evicted" ]; then
	echo "  no eviction yet: this machine is busy; see harvestctl status and the driver's events" >&2
else
	step "harvestctl explain alloc ${evicted:0:8}: why the driver evicted it"
	"$bin/harvestctl" explain alloc "$evicted" | sed 's/^/  /'
	for _ in $(seq 60); do
		moved=$(nomad job allocs -t '{{range .}}{{if and (eq .ClientStatus "running") (ne .NodeName "client-1")}}{{.NodeName}}{{end}}{{end}}' demo-harvest-3)
		[ -n "$moved" ] && break
		sleep 0.5
	done
	echo "  the work moved on: demo-harvest-3 now runs on ${moved:-(not yet placed)}"
fi
wait "$spike" || true

step "harvestctl status: every harvested node on one screen"
"$bin/harvestctl" status | sed 's/^/  /'

step "Done. The cluster keeps running:"
"$bin/harvest-dev" dev-cluster status -run-dir "$run_dir"
echo "Try: source $run_dir/env.sh && nomad job status && harvestctl status"
