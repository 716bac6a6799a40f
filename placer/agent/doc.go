// Package agent runs the harvest placer as a daemon: its runtime. New
// builds the placer from its settings, decoded once by placer/config, and
// Run serves its HTTP API behind its guard (server.go, auth.go), the
// admission proxy and its metrics (metrics.go) and runs its loops
// (runtime.go) until it stops. It also pulls tenant history through a
// history-importer plugin (historyimport.go). What the loops and routes do
// is the feature packages', which the agent wires together: the class
// table's refresh and survival replay (placer/agent/classes), the tenant
// declarations and the policy document (placer/agent/declarations), the
// ingest of tenant samples (placer/agent/ingest), the stage sequencer
// behind the proxy (placer/agent/sequencer), the class room Algorithm 1
// weighs (placer/agent/classroom) and each placement strategy, a package
// of placer/agent/strategy that strategies.go builds from the
// configuration. They share one view of Nomad (placer/agent/cluster).
package agent
