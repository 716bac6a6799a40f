// Package declare holds the shapes and checks of what operators declare to
// Harvest in Consul KV, beside the tenant history: one declaration per
// primary tenant at <prefix>declarations/tenants/<environment>/<function>
// (storage and the CPU and memory reserve of its nodes) and the placer's
// policy document at <prefix>declarations/policy (classifier thresholds,
// Algorithm 1's weights, reserve defaults, the blob tier's replicas and
// diversity). The placer serves and publishes them
// (placer/agent/declarations); the harvest driver reads its tenant's
// reserve from them (driver); the blob front its nodes' storage and the
// default replication (storage/front).
// All check a stored value with the same rules here, so a document one
// calls corrupt the others do too.
//
// It does no I/O of its own: the documents are read and written through
// history.Store (GetDocument, PutDocument, ListDocuments, DeleteDocument)
// under the names TenantDocument and PolicyName; read.go holds the readers
// everyone shares (ReadPolicy, ReadTenant, ReadTenants) and FailureLog, the
// log-each-failure-once of the periodic ones.
package declare
