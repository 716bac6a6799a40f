// Package contract owns the names and wire types Harvest's components
// share: the node and job meta keys the placer writes and Nomad's
// scheduler, the driver and harvestctl read; the harvest driver's task
// event annotations and eviction message; the documents the components
// keep in Consul KV under the platform's prefix (the busy flag). A name
// that crosses a component's boundary is defined here once, the way
// nomad-autoscaler's sdk/ holds the names its plugins share; components
// import this package and never each other.
package contract
