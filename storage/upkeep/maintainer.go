package upkeep

import (
	"context"

	"github.com/harvest-platform/harvest/storage/nodes"
)

// Any number of fronts may serve the same buckets: the catalogue is their
// one shared state, and every change of an entry is a check-and-set on it.
// What must not run twice at once is the tier's maintenance: forgetting a
// lost or reimaged node's replicas and giving the node a new identity
// marker, the repairer's scans, the scrubber's passes and the garbage
// collector's. Two fronts each re-marking a reimaged node would take each
// other's new marker for another reimage and drop the node's replicas over
// and over. So one front at a time, the maintainer (the holder of a Consul
// session lock, storage/blobd), does them; the others serve reads and
// writes, follow node health for their reads, recount what each node holds
// and stand by. An operator's POST /v1/gc or /v1/scrub runs on whichever
// front it reaches (both passes are safe beside another: every change is a
// check-and-set, and the collector deletes only replicas older than its
// grace).

// SetMaintainer says whether this front is the maintainer now. An Upkeep
// is its own maintainer until told otherwise (one front, or a test).
func (u *Upkeep) SetMaintainer(on bool) {
	if u.follower.Swap(!on) == !on {
		return
	}
	if on {
		u.log.Info("maintaining the blob tier: forgetting lost nodes, repairs, scrubs and garbage collection")
		u.metrics.maintainer.Set(1)
		u.repair.kick()
		return
	}
	u.log.Info("standing by: another front maintains the blob tier")
	u.metrics.maintainer.Set(0)
}

// Maintainer reports whether this front runs the tier's maintenance.
func (u *Upkeep) Maintainer() bool { return !u.follower.Load() }

// AdoptMarker is how a front that is not the maintainer follows a node whose
// identity marker is not the one it knew: the maintainer registers every
// marker it writes before it places anything on the node, so a marker the
// registry holds is the node's own (the maintainer re-marked it), and any
// other is not yet: the node stays down for this front until the registry
// says so.
func (u *Upkeep) AdoptMarker(ctx context.Context, reg *nodes.Registry, id, marker string) bool {
	if marker == "" {
		return false
	}
	known, err := reg.List(ctx)
	if err != nil {
		return false
	}
	for _, n := range known {
		if n.ID == id && n.Marker == marker {
			u.nodes.SetMarker(id, marker)
			return true
		}
	}
	return false
}
