// Package history owns the tenant-history schema and its store in Consul KV:
// per primary tenant, its nodes, the CPU utilisation of its "average server"
// at 2-minute slots, and its reimage events. The driver writes it, the placer
// and the blob tier read it; it imports no component.
//
// Keys, under a configurable prefix (default "harvest/"):
//
//	tenants/<environment>/<function>           JSON: environment, function, nodes
//	cpu/<environment>/<function>/<YYYY-MM-DD>  one day of 720 slots (binary, see day.go)
//	reimages/<environment>/<function>/<YYYY-MM> JSON list of {node, time}
//	classes                                    the placer's class table (JSON)
//	declarations/tenants/<environment>/<function> the placer's tenant declarations (JSON)
//	declarations/policy                        the placer's policy document (JSON)
//
// The declarations' shapes and checks are in history/declare.
//
// A day is 4.3 KB, so appends rewrite only today's small value (never near
// Consul's 512 KiB limit) and reading a month is one recursive list. Every
// write is a check-and-set, retried on conflict, so concurrent writers never
// lose each other's samples. A value that does not decode gives a
// *CorruptError naming its key.
package history
