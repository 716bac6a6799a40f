// Package clustertest owns the placer's test doubles of Nomad's HTTP API as
// placer/agent/cluster's view reads it: CountingNomad (a few nodes, node
// reads counted, meta applies recorded) and ScaleNomad (a datacenter of
// nodes, DAG jobs and allocations with Nomad's blocking queries, every
// request counted by kind). The runtime's, the cluster view's and the
// placement strategies' tests share them.
package clustertest
