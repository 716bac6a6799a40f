// Package localcluster owns the local cluster of real processes that the demo
// and the acceptance tests run against: a Consul dev server, one Consul client
// agent per Nomad client, one Nomad server, N Nomad clients (each with its own
// static harvest_* meta and the harvest driver in its plugin_dir) and one MinIO
// server per Nomad client, all on 127.0.0.1.
//
// Up writes every config, data directory, log and the cluster's state
// (cluster.json, with the pid of every process) under one run folder, and
// waits until each part is healthy. Down stops jobs first (a stopped Nomad
// client leaves its tasks running and its mounts in place), then the agents,
// then sweeps whatever is left: task processes, cgroups and mounts under the
// run folder. Ports come from a block of 100 claimed machine-wide, so two
// clusters on one machine do not collide; a claim whose owner died is reaped
// (its cluster torn down) by the next Up or by SweepStale.
package localcluster
