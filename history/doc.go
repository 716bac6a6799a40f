// Package history owns the tenant-history schema and its store in Consul KV:
// per primary tenant, its nodes, the CPU utilisation of its "average server"
// at 2-minute slots, and its reimage events. The driver writes it, the placer
// and the blob tier read it; it imports no component.
//
// Keys, under a configurable prefix (default "harvest/"):
//
//	tenants/<environment>/<function>             JSON: environment, function, nodes
//	history-format                               JSON {"day_format": 2|3} (format.go)
//	days/<YYYY-MM-DD>/t/<environment>/<function> format 3: one tenant's day (daycodec.go)
//	days/<YYYY-MM-DD>/b/<i>-of-<n>               format 3: a sealed day of ~64 tenants (bundle.go)
//	cpu/<environment>/<function>/<YYYY-MM-DD>    format 2: one day, read forever, written while the marker says 2
//	reimages/<environment>/<function>/<YYYY-MM>  JSON list of {node, time}
//	classes                                      the placer's class table (JSON)
//	declarations/tenants/<environment>/<function> the placer's tenant declarations (JSON)
//	declarations/policy                          the placer's policy document (JSON)
//
// The declarations' shapes and checks are in history/declare.
//
// Writers (drivers, imports) write a tenant's own day key with a
// check-and-set, retried on conflict, so concurrent writers never lose each
// other's samples; a write that changes nothing is skipped. The placer seals
// days no driver writes any more into bundles (Seal), so that Consul holds
// thousands of keys for a datacenter's month, not hundreds of thousands, and
// reads them through a Cache that re-lists only the days whose index moved.
// A value that does not decode gives a *CorruptError naming its key.
package history
