// Package testbed owns the paper's testbed experiment on a local cluster of
// real processes (history-based-harvesting.txt Section 6, "Experimental
// testbed"): Nomad clients the size of the paper's servers whose primary
// tenants replay a CPU history through the drivers' usage source, the
// placer classifying the window before the span, and a Poisson stream of
// the simulator's DAG jobs submitted with `nomad job run` through the
// admission proxy, under one policy (stock, PT or H); and its report: job
// times counting queueing, kills, wasted task-seconds, reserve breaches,
// daemons' error lines, beside the simulator's prediction for the same
// tenants, servers and jobs. harvest-dev testbed runs it.
package testbed
