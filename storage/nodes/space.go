package nodes

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

func (p *Pool) spaceOf(id string) *space {
	s := p.space[id]
	if s == nil {
		s = &space{diskFree: -1}
		p.space[id] = s
	}
	return s
}

// room is the bytes a node may still take (p.mu held).
func (p *Pool) room(id string) int64 {
	s := p.spaceOf(id)
	r := p.capacity[id] - s.committed - s.pending - s.orphans - p.others[id]
	if s.diskFree >= 0 {
		r = min(r, s.diskFree-p.minFree-s.sinceDisk)
	}
	return max(0, r)
}

// Room is the bytes a node may still take.
func (p *Pool) Room(id string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.room(id)
}

// used is what a node holds as accounted (p.mu held).
func (p *Pool) used(id string) int64 {
	s := p.spaceOf(id)
	return s.committed + s.pending + s.orphans
}

// Reserve takes size bytes on every node for a write in flight, or on
// none when one has no room; it answers whether it did.
func (p *Pool) Reserve(ids []string, size int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if p.room(id) < size {
			return false
		}
	}
	for _, id := range ids {
		s := p.spaceOf(id)
		s.pending += size
		s.sinceDisk += size
	}
	return true
}

// Unreserve gives back what a write that failed held.
func (p *Pool) Unreserve(ids []string, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		p.spaceOf(id).pending -= size
	}
}

// Commit moves held bytes (pending) to committed: the catalogue now
// lists them.
func (p *Pool) Commit(ids []string, held, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		s := p.spaceOf(id)
		s.pending -= held
		s.committed += size
	}
	p.noteAdded(ids, size, time.Now())
}

// Orphan moves a replica's bytes from committed to orphans: no entry
// lists it any more, and it is on the node until the GC deletes it.
func (p *Pool) Orphan(id string, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.spaceOf(id)
	s.committed -= size
	s.orphans += size
}

// Collected takes bytes the GC deleted off a node's orphans.
func (p *Pool) Collected(id string, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.spaceOf(id)
	s.orphans = max(0, s.orphans-size)
}

// SetCommitted sets every node's committed bytes from a catalogue scan
// that began at began.
func (p *Pool) SetCommitted(bytes map[string]int64, began time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.countedAt = began
	for _, node := range p.list {
		p.spaceOf(node.ID).committed = bytes[node.ID]
	}
}

// SetOrphans sets a node's orphan bytes from a GC pass.
func (p *Pool) SetOrphans(id string, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spaceOf(id).orphans = bytes
}

// AddPending adds the parts of open uploads found at start.
func (p *Pool) AddPending(id string, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spaceOf(id).pending += bytes
}

// SetDiskFree records a reading of a node's free disk (-1: unknown).
func (p *Pool) SetDiskFree(id string, free int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.spaceOf(id)
	s.diskFree, s.sinceDisk = free, 0
	if free >= 0 {
		delete(p.flags, id+"\x00disk")
	}
}

// DiskFull records that a node refused a write for want of disk.
func (p *Pool) DiskFull(id string) { p.SetDiskFree(id, 0) }

// saturatingMB is a MiB count in bytes, saturating.
func saturatingMB(mb int64) int64 {
	if mb > math.MaxInt64>>20 {
		return math.MaxInt64
	}
	return mb << 20
}
