// Package cluster owns the one view of Nomad the placer's loops share
// (View): Nomad's node, job and allocation lists kept by blocking queries
// (watch.go), each node's full record read only when its modify index
// moves, and the meta the placer applied until the servers show it
// (view.go). The class refresh labels nodes through it (NodeAPI), the
// placement strategies, the declarations' publishing and the stage
// sequencer read and write through it, and the admission proxy's room
// device reads the least core MHz of the driver's nodes from it
// (coremhz.go).
package cluster
