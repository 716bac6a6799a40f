// Package agent runs the harvest placer as a daemon: it classifies primary
// tenants on a schedule and on demand, keeps the class table in Consul KV,
// labels Nomad nodes with their class, and serves its HTTP API and metrics.
// It wires the pure packages (classify, labels) to Nomad and Consul. It also
// keeps the tenant declarations and the policy document in Consul KV
// (declarations.go, policydoc.go) and applies them (declsync.go), and can
// pull tenant history through a history-importer plugin (historyimport.go).
// Its configuration file, and the settings decoded from it, are
// placer/config's; the class table's refresh and survival replay are
// placer/agent/classes', which the agent runs and serves, the class room
// Algorithm 1 weighs is placer/agent/classroom's, the stage sequencer
// behind the proxy is placer/agent/sequencer's, and each placement
// strategy is a package of placer/agent/strategy, which strategies.go
// builds from the configuration.
package agent
