// Package placer is the harvest placer: it classifies primary tenants from
// their utilisation history, labels Nomad nodes with their class, and, as an
// admission proxy in front of Nomad's HTTP API, rewrites harvested jobs'
// constraints. Its algorithms live in I/O-free subpackages that the simulator
// runs too.
package placer
