// Package declare holds the shapes and checks of what operators declare to
// Harvest in Consul KV, beside the tenant history: one declaration per
// primary tenant at <prefix>declarations/tenants/<environment>/<function>
// (storage and the CPU and memory reserve of its nodes) and the placer's
// policy document at <prefix>declarations/policy (classifier thresholds,
// Algorithm 1's weights, reserve defaults, the blob tier's replicas and
// diversity). The placer serves and publishes them (placer/agent); the
// harvest driver reads its tenant's reserve from them (driver). Both check
// a stored value with the same rules here, so a document one calls corrupt
// the other does too.
//
// It does no I/O: callers read and write the documents through
// history.Store (GetDocument, PutDocument, ListDocuments, DeleteDocument)
// under the names TenantDocument and PolicyName.
package declare
