// Package nomadtest owns the tests' fake Nomad HTTP API, shared by every
// component's tests: CountingNomad (a few nodes, node reads counted, meta
// applies recorded) and ScaleNomad (a datacenter of nodes, DAG jobs and
// allocations with Nomad's blocking queries, job registrations, node
// drains and eligibility, every request counted by kind and by path).
package nomadtest
