#!/usr/bin/env bash
# demo.sh brings up the local cluster and runs Harvest's main flow on it with
# the ordinary CLIs: a batch job through `nomad job run`, a class label
# through `nomad node meta apply` that steers a job to one node, and a
# dataset object written to and read back from every MinIO server.
# The cluster stays up afterwards; `make cluster-down` stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run_dir=${RUN_DIR:-$root/.run/cluster}
bin=$root/bin
step() { printf '\n==> %s\n' "$*"; }

if [ -f "$run_dir/cluster.json" ] && "$bin/harvestctl" dev-cluster status -run-dir "$run_dir" >/dev/null 2>&1; then
	step "Reusing the cluster already running in $run_dir"
	"$bin/harvestctl" dev-cluster status -run-dir "$run_dir"
else
	step "Starting the local cluster (Consul, Nomad server, 3 Nomad clients, 3 MinIO servers)"
	"$bin/harvestctl" dev-cluster up -run-dir "$run_dir"
fi
# shellcheck disable=SC1091
source "$run_dir/env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "Nodes, with their primary tenant in static meta"
nomad node status -verbose | sed -n '1,10p'

step "A batch job on client-2 through 'nomad job run'"
cat >"$work/hello.nomad.hcl" <<'JOB'
job "demo-hello" {
  type = "batch"
  constraint {
    attribute = "${node.unique.name}"
    value     = "client-2"
  }
  group "hello" {
    task "hello" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello from ${node.unique.name}, tenant ${meta.harvest_tenant}"]
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
JOB
nomad job run "$work/hello.nomad.hcl"
alloc=$(nomad job allocs -t '{{range .}}{{if eq .ClientStatus "complete"}}{{.ID}}{{end}}{{end}}' demo-hello)
for _ in $(seq 40); do
	[ -n "$alloc" ] && break
	sleep 0.5
	alloc=$(nomad job allocs -t '{{range .}}{{if eq .ClientStatus "complete"}}{{.ID}}{{end}}{{end}}' demo-hello)
done
nomad alloc logs "$alloc" hello

step "A class label in dynamic node meta steers a job to exactly that node"
node=$(nomad node status -t '{{range .}}{{if eq .Name "client-3"}}{{.ID}}{{end}}{{end}}')
nomad node meta apply -node-id "$node" harvest_class=demo-class
cat >"$work/classed.nomad.hcl" <<'JOB'
job "demo-classed" {
  type = "batch"
  constraint {
    attribute = "${meta.harvest_class}"
    value     = "demo-class"
  }
  group "work" {
    count = 3
    task "work" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo placed on ${node.unique.name}"]
      }
      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
JOB
nomad job run "$work/classed.nomad.hcl"
nomad job allocs -t '{{range .}}{{.ID | printf "%.8s"}} on {{.NodeName}} ({{.ClientStatus}}){{"\n"}}{{end}}' demo-classed

step "An object PUT to each MinIO server reads back byte-identical"
head -c 1048576 /dev/urandom >"$work/object.bin"
want=$(sha256sum <"$work/object.bin" | cut -d' ' -f1)
i=1
while mc_var="MC_HOST_minio$i"; [ -n "${!mc_var:-}" ]; do
	mc mb --ignore-existing "minio$i/demo" >/dev/null
	mc cp --quiet "$work/object.bin" "minio$i/demo/object.bin" >/dev/null
	got=$(mc cat "minio$i/demo/object.bin" | sha256sum | cut -d' ' -f1)
	[ "$got" = "$want" ] && echo "minio$i: 1 MiB object round-tripped, sha256 ${got:0:16}..." || { echo "minio$i: MISMATCH"; exit 1; }
	i=$((i + 1))
done

step "Done. The cluster keeps running:"
"$bin/harvestctl" dev-cluster status -run-dir "$run_dir"
echo "Try: source $run_dir/env.sh && nomad job status"
