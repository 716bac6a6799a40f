// Package acceptance holds the end-to-end tests of Harvest. They run against
// a local cluster of real Consul, Nomad and MinIO processes (see
// internal/localcluster) and live behind the `acceptance` build tag:
//
//	go test -tags acceptance -v ./acceptance/...   (or: make acceptance)
//
// make test runs them in groups, each on a cluster of its own: acceptance
// (the plain cluster), acceptance-secure (TLS and default-deny ACLs),
// acceptance-install, acceptance-demo, acceptance-testbed and
// acceptance-blob-race (the blob tier under the race detector). TestMeasure*
// are measurements, run only with HARVEST_MEASURE=1.
//
// # Index: component, then the files that test it
//
// The local cluster itself (every client a harvested node, its own Consul
// agent and MinIO): nomad_test.go, minio_test.go, consulkv_test.go,
// jobs_test.go (the shipped Nomad jobs validate; the storage system job).
//
// The harvest driver (driver/): eviction_test.go (youngest first, work moves
// on), primary_first_test.go (unprivileged tasks, the CPU cap before
// eviction, fail-safe when the primary is unmeasured), declared_reserve_test.go,
// usage_plugin_test.go (the external usage source), measure_test.go,
// measure_eviction_test.go and measure_primary_test.go (measurements);
// burner_test.go and standin_test.go are their helpers.
//
// The placer (placer/): placer_test.go (labels from imported history, the
// drivers' samples reach the history), history_import_test.go (an external
// importer plugin), proxy_test.go (a DAG job stage by stage through the
// admission proxy), room_test.go (no group placed beyond the drivers'
// published room; with the harvest-room device, allocations counted
// against the room within an evaluation), policies_test.go (packing, the short-job partition;
// helpers in policies_helpers_test.go), escalation_test.go (greylisting and
// escalation), escalation_partial_test.go (a partly placed job escalated
// without restarting its running task), maintenance_test.go (maintenance by accumulated work).
//
// The blob tier (storage/): blob_test.go (diverse replicas, reads around busy
// nodes), blob_clients_test.go (real S3 clients), blob_faults_test.go
// (killed nodes, reimages, front restarts), blob_fronts_test.go (many fronts
// under load), blob_integrity_test.go (scrub, repair, declared storage),
// blob_races_test.go, blob_readchoice_test.go, blob_redirect_test.go,
// blob_reload_test.go, blob_declarations_test.go; measurements in
// blob_measure_test.go, blob_load_test.go and blob_catalogue_measure_test.go;
// helpers in blob_helpers_test.go and relay_test.go.
//
// Security (a cluster with TLS and ACLs): secure_test.go (the placer's
// capabilities, the proxy's token handling, what a harvested task cannot
// reach), secure_blob_test.go, secure_terraform_test.go; helpers in
// secure_helpers_test.go.
//
// Provisioning: terraform_provider_test.go, terraform_example_test.go
// (helpers in terraform_helpers_test.go), install_test.go (docs/install.md
// followed literally).
//
// Whole flows: demo_test.go (make demo from a private clone, twice),
// testbed_test.go (a short testbed: replayed primaries, a job stream, the
// blob tier, the report's invariants).
//
// Shared: main_test.go (TestMain starts the cluster a group needs),
// helpers_test.go and daemon_test.go.
package acceptance
