package front

// Capacity is enforced on what each node really holds, not only on what
// the catalogue lists. A node's bytes are
//
//	committed  replicas the catalogue lists (recounted by every repair scan)
//	pending    writes in flight, and the parts of open multipart uploads as
//	           they arrive (recounted from the upload records at start)
//	orphans    replicas no entry reaches any more, until the garbage
//	           collector deletes them (recounted by every GC pass)
//	others     the other fronts' pending bytes and what they committed
//	           since this front's last scan began (ledger.go)
//
// and a node has room for size bytes when committed + pending + orphans +
// size stays within its effective capacity (the tenant's declared
// storage_mb, else capacity_mb) and its disk keeps min_free_mb free after
// the write: the disk's free space is read from the node (MinIO's drive
// metrics) at every health check, less what was reserved since.

import (
	"math"
	"time"
)

// space is one node's bytes as the front accounts them.
type space struct {
	committed, pending, orphans int64
	diskFree                    int64 // at the last reading; -1 unknown
	sinceDisk                   int64 // reserved since that reading
}

func (n *Nodes) spaceOf(id string) *space {
	s := n.space[id]
	if s == nil {
		s = &space{diskFree: -1}
		n.space[id] = s
	}
	return s
}

// room is the bytes a node may still take (n.mu held).
func (n *Nodes) room(id string) int64 {
	s := n.spaceOf(id)
	r := n.capacity[id] - s.committed - s.pending - s.orphans - n.others[id]
	if s.diskFree >= 0 {
		r = min(r, s.diskFree-n.minFree-s.sinceDisk)
	}
	return max(0, r)
}

// Room is the bytes a node may still take.
func (n *Nodes) Room(id string) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.room(id)
}

// used is what a node holds as accounted (n.mu held).
func (n *Nodes) used(id string) int64 {
	s := n.spaceOf(id)
	return s.committed + s.pending + s.orphans
}

// reserveOn takes size bytes on every node for a write in flight, or on
// none when one has no room; it answers whether it did.
func (n *Nodes) reserveOn(ids []string, size int64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		if n.room(id) < size {
			return false
		}
	}
	for _, id := range ids {
		s := n.spaceOf(id)
		s.pending += size
		s.sinceDisk += size
	}
	return true
}

// unreserve gives back what a write that failed held.
func (n *Nodes) unreserve(ids []string, size int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		n.spaceOf(id).pending -= size
	}
}

// committedOn moves held bytes (pending) to committed: the catalogue now
// lists them.
func (n *Nodes) committedOn(ids []string, held, size int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		s := n.spaceOf(id)
		s.pending -= held
		s.committed += size
	}
	n.noteAdded(ids, size, time.Now())
}

// orphaned moves a replica's bytes from committed to orphans: no entry
// lists it any more, and it is on the node until the GC deletes it.
func (n *Nodes) orphaned(id string, size int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.spaceOf(id)
	s.committed -= size
	s.orphans += size
}

// collected takes bytes the GC deleted off a node's orphans.
func (n *Nodes) collected(id string, size int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.spaceOf(id)
	s.orphans = max(0, s.orphans-size)
}

// setCommitted sets every node's committed bytes from a catalogue scan
// that began at began.
func (n *Nodes) setCommitted(bytes map[string]int64, began time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.countedAt = began
	for _, node := range n.list {
		n.spaceOf(node.ID).committed = bytes[node.ID]
	}
}

// setOrphans sets a node's orphan bytes from a GC pass.
func (n *Nodes) setOrphans(id string, bytes int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.spaceOf(id).orphans = bytes
}

// addPending adds the parts of open uploads found at start.
func (n *Nodes) addPending(id string, bytes int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.spaceOf(id).pending += bytes
}

// setDiskFree records a reading of a node's free disk (-1: unknown).
func (n *Nodes) setDiskFree(id string, free int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.spaceOf(id)
	s.diskFree, s.sinceDisk = free, 0
	if free >= 0 {
		delete(n.flags, id+"\x00disk")
	}
}

// diskFull records that a node refused a write for want of disk.
func (n *Nodes) diskFull(id string) { n.setDiskFree(id, 0) }

// saturatingMB is a MiB count in bytes, saturating.
func saturatingMB(mb int64) int64 {
	if mb > math.MaxInt64>>20 {
		return math.MaxInt64
	}
	return mb << 20
}
