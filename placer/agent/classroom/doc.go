// Package classroom owns the class room Algorithm 1 weighs (line 8,
// Headroom(J.type, c)): the stored class table joined with what the
// harvest driver on each labelled node would admit for a job of each type
// (room.go: the driver's fingerprint, its busy flag in Consul KV and the
// harvested allocations on the node), summed per class and cached briefly
// (view.go). The admission proxy's rewriter and placement escalation read
// it; the nodes come from the shared cluster view.
package classroom
