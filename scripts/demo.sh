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
	[ -f "$run_dir/cluster.json" ] && "$bin/harvestctl" dev-cluster down -run-dir "$run_dir"
	step "Starting the local cluster (Consul, Nomad server, 3 Nomad clients, 3 MinIO servers)"
	"$bin/harvestctl" dev-cluster up -run-dir "$run_dir"
fi
# shellcheck disable=SC1091
source "$run_dir/env.sh"
export NOMAD_CLI_SHOW_HINTS=false
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "Nodes, with their primary tenant in static meta"
nomad node status -t '{{range .}}  {{.Name}}  {{.Status}}  drivers: {{range $d, $i := .Drivers}}{{if $i.Healthy}}{{$d}} {{end}}{{end}}{{"\n"}}{{end}}'
for n in $(nomad node status -t '{{range .}}{{.ID}} {{end}}'); do
	nomad node status -t '  {{.Name}}: harvest_tenant={{.Meta.harvest_tenant}} harvest_environment={{.Meta.harvest_environment}} harvest_rack={{.Meta.harvest_rack}}' "$n"
done

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

step "A job constrained on \${meta.harvest_class} waits until 'nomad node meta apply' labels a node"
node=$(nomad node status -t '{{range .}}{{if eq .Name "client-3"}}{{.ID}}{{end}}{{end}}')
class="demo-$(date +%s)" # a fresh label, so a reused cluster shows the same story
cat >"$work/classed.nomad.hcl" <<'JOB'
job "demo-classed" {
  type = "batch"
  constraint {
    attribute = "${meta.harvest_class}"
    value     = "CLASS"
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
sed -i "s/CLASS/$class/" "$work/classed.nomad.hcl"
nomad job run -detach "$work/classed.nomad.hcl" >/dev/null
sleep 1
echo "before the label:"
nomad job status demo-classed | sed -n '/^Summary/,/^$/p'
echo "nomad node meta apply -node-id ${node:0:8} harvest_class=$class"
nomad node meta apply -node-id "$node" harvest_class="$class"
for _ in $(seq 60); do
	done_count=$(nomad job allocs -t '{{range .}}{{if eq .ClientStatus "complete"}}x{{end}}{{end}}' demo-classed)
	[ "${#done_count}" -ge 3 ] && break
	sleep 0.5
done
echo "after the label:"
nomad job allocs -t '{{range .}}  {{printf "%.8s" .ID}} on {{.NodeName}} ({{.ClientStatus}}){{"\n"}}{{end}}' demo-classed

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

step "Tenant history into Consul KV; the placer classifies it into Nomad node metadata"
"$bin/harvestctl" history synth -seed 7 -tenants 30 -days 35 -import \
	-tenant search/frontend=periodic -tenant ads/indexer=constant -tenant mail/store=unpredictable
pidfile=$run_dir/logs/harvest-placer.pid
if ! { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }; then
	cat >"$run_dir/placer.hcl" <<CONFIG
http_addr = "${HARVEST_PLACER_ADDR#http://}"
nomad {
  address = "$NOMAD_ADDR"
}
consul {
  address = "$CONSUL_HTTP_ADDR"
}
proxy {
  address = "${HARVEST_PROXY_ADDR#http://}"
}
acl {
  tokens = ["$HARVEST_PLACER_TOKEN"]  # harvestctl sends it (env.sh exports it)
}
CONFIG
	# started in the run folder, so that make cluster-down stops it with the cluster
	(cd "$run_dir" && exec setsid "$bin/harvest-placer" agent -config "$run_dir/placer.hcl" \
		>>"$run_dir/logs/harvest-placer.log" 2>&1 </dev/null) &
	echo $! >"$pidfile"
fi
for _ in $(seq 50); do
	"$bin/harvestctl" classes refresh >/dev/null 2>&1 && break
	sleep 0.2
done
"$bin/harvestctl" classes refresh | sed -n '1,/^unclassified/p'
# dynamic node meta reaches the servers a few seconds after it is applied
for _ in $(seq 60); do
	pending=$(nomad node status -t '{{range .}}{{.ID}} {{end}}' | tr ' ' '\n' | grep -c . || true)
	for n in $(nomad node status -t '{{range .}}{{.ID}} {{end}}'); do
		nomad node status -t '{{index .Meta "harvest_pattern"}}' "$n" | grep -q . && pending=$((pending - 1))
	done
	[ "$pending" -le 0 ] && break
	sleep 0.5
done
echo
for n in $(nomad node status -t '{{range .}}{{.ID}} {{end}}'); do
	nomad node status -t '  {{.Name}}: tenant {{.Meta.harvest_tenant}} -> harvest_class={{.Meta.harvest_class}} harvest_pattern={{.Meta.harvest_pattern}}' "$n"
done

step "A harvested DAG job through the placer's admission proxy: NOMAD_ADDR=$HARVEST_PROXY_ADDR nomad job run"
NOMAD_ADDR=$HARVEST_PROXY_ADDR nomad job run -detach "$root/jobs/examples/harvest-dag.nomad.hcl"
nomad job inspect -t '  harvest_classes={{index .Meta "harvest_classes"}} harvest_job_type={{index .Meta "harvest_job_type"}}
  harvest_reason: {{index .Meta "harvest_reason"}}
  constraint: {{range .Constraints}}{{.LTarget}} {{.Operand}} {{.RTarget}}{{end}}' harvest-dag
echo "  stages run in order (the next starts when the previous completes):"
for _ in $(seq 90); do
	nomad job status harvest-dag.load 2>/dev/null | grep -q 'Status.*= dead' && break
	sleep 1
done
for j in harvest-dag harvest-dag.transform harvest-dag.load; do
	nomad job allocs -t '{{range .}}    '"$j"' {{.TaskGroup}} on {{.NodeName}}: {{.ClientStatus}}{{"\n"}}{{end}}' "$j" 2>/dev/null | head -3 || true
done

step "Datasets on harvested disks: harvest-blob serves S3 from the MinIO servers, 3 replicas by Algorithm 2"
pidfile=$run_dir/logs/harvest-blob.pid
if ! { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }; then
	{
		printf 'listen = "%s"\nadmin_listen = "%s"\naccess_key = "demo-access"\nsecret_key = "demo-secret-key"\nreplicas = 3\n' \
			"$HARVEST_BLOB_ADDR" "${HARVEST_BLOB_ADMIN_ADDR#http://}"
		printf 'consul {\n  address = "%s"\n}\n' "$CONSUL_HTTP_ADDR"
		i=1
		while mc_var="MC_HOST_minio$i"; [ -n "${!mc_var:-}" ]; do
			url=${!mc_var#http://}
			creds=${url%@*}
			node=$(nomad node status -t "{{range .}}{{if eq .Name \"client-$i\"}}{{.ID}}{{end}}{{end}}")
			nomad node status -t "node \"client-$i\" {
  endpoint    = \"${url#*@}\"
  access_key  = \"${creds%%:*}\"
  secret_key  = \"${creds#*:}\"
  tenant      = \"{{.Meta.harvest_tenant}}\"
  environment = \"{{.Meta.harvest_environment}}\"
  rack        = \"{{.Meta.harvest_rack}}\"
  capacity_mb = 1024
}
" "$node"
			i=$((i + 1))
		done
	} >"$run_dir/blob.hcl"
	(cd "$run_dir" && exec setsid "$bin/harvest-blob" agent -config "$run_dir/blob.hcl" \
		>>"$run_dir/logs/harvest-blob.log" 2>&1 </dev/null) &
	echo $! >"$pidfile"
	for _ in $(seq 50); do (exec 3<>"/dev/tcp/${HARVEST_BLOB_ADDR%:*}/${HARVEST_BLOB_ADDR#*:}") 2>/dev/null && break; sleep 0.2; done
fi
export MC_HOST_harvest="http://demo-access:demo-secret-key@$HARVEST_BLOB_ADDR"
mc mb --ignore-existing harvest/demo-data >/dev/null
mc cp --quiet "$work/object.bin" harvest/demo-data/object.bin >/dev/null
got=$(mc cat harvest/demo-data/object.bin | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] && echo "  1 MiB object through harvest-blob read back identical (sha256 ${got:0:16}...)" || { echo "  MISMATCH"; exit 1; }
curl -s "$CONSUL_HTTP_ADDR/v1/kv/harvest/blob/objects/demo-data/object.bin?raw" 2>/dev/null |
	sed -n 's/.*"replicas":\(\[[^]]*\]\).*/  replicas: \1/p' || true
"$bin/harvestctl" blob status | sed 's/^/  /'

step "Done. The cluster keeps running:"
"$bin/harvestctl" dev-cluster status -run-dir "$run_dir"
echo "Try: source $run_dir/env.sh && nomad job status"
