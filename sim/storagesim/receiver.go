package storagesim

import (
	"fmt"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/storage/grid"
)

// What the repair rate limits (Config.RepairLimit). The paper gives "30
// blocks/hour/server" (L202) without saying which server.
const (
	// RepairLimitReimaged: each reimaged server's lost replicas are
	// re-created at the rate, in its own queue (the simulator's reading,
	// the default).
	RepairLimitReimaged = "reimaged"
	// RepairLimitReceiver: each live server receives at most the rate,
	// from one queue of the datacenter's under-replicated blocks, as the
	// blob repairer does (storage/upkeep/repair.go: a token bucket of one
	// per receiving server; a block whose chosen server has no token waits
	// for the next pass).
	RepairLimitReceiver = "receiver"
)

// ParseRepairLimit reads "reimaged" or "receiver" ("" is reimaged).
func ParseRepairLimit(s string) (string, error) {
	switch s {
	case "":
		return RepairLimitReimaged, nil
	case RepairLimitReimaged, RepairLimitReceiver:
		return s, nil
	}
	return "", fmt.Errorf("repair limit %q: want %s or %s", s, RepairLimitReimaged, RepairLimitReceiver)
}

// receiverTick is how often the receiver-limited repairer passes over its
// queue: at 30 replicas an hour, one token per server per pass.
const receiverTick = 2 * time.Minute

// queued is one block waiting in the receiver-limited queue: valid while
// gen is the block's latest and the block still has the bucket's survivors.
type queued struct {
	b     int32
	gen   uint32
	since time.Duration
	risk  float64
}

// receiverQueue holds the under-replicated blocks by survivors (bucket k:
// k replicas left), each bucket in the repair order, and every server's
// tokens.
type receiverQueue struct {
	buckets [][]queued
	dirty   []bool // a bucket got entries since it was last sorted
	gen     []uint32
	tokens  []float64
	perTick float64
	next    time.Duration // the next pass; only meaningful while blocks wait
	waiting int           // entries in the buckets (stale ones included)
	maxWait time.Duration
}

func newReceiverQueue(cfg Config, servers int) *receiverQueue {
	q := &receiverQueue{buckets: make([][]queued, cfg.Replicas), dirty: make([]bool, cfg.Replicas), gen: make([]uint32, cfg.Blocks), tokens: make([]float64, servers),
		perTick: cfg.RepairPerHour * receiverTick.Hours()}
	for i := range q.tokens {
		q.tokens[i] = max(1, q.perTick)
	}
	return q
}

// take queues the blocks a wipe left under-replicated.
func (q *receiverQueue) take(s *state, blocks []int32, now time.Duration) {
	for _, b := range blocks {
		q.enqueue(s, b, now)
	}
}

// due is the next pass while blocks wait.
func (q *receiverQueue) due() time.Duration {
	if q.waiting == 0 {
		return never
	}
	return q.next
}

func (q *receiverQueue) longestHours() float64 { return q.maxWait.Hours() }

// enqueue puts block b in the bucket of its survivors (any older entry of
// it goes stale); a lost or whole block is not queued.
func (q *receiverQueue) enqueue(s *state, b int32, now time.Duration) {
	if k := int(s.live[b]); k == 0 || k >= s.cfg.Replicas {
		return
	}
	q.gen[b]++
	e := queued{b: b, gen: q.gen[b], since: now}
	if s.cfg.RepairOrder == RepairByRisk {
		e.risk = s.risk(b)
	}
	k := s.live[b]
	q.buckets[k], q.dirty[k] = append(q.buckets[k], e), true
	if q.waiting == 0 {
		q.next = (now/receiverTick + 1) * receiverTick
	}
	q.waiting++
}

// run is a pass: it refills every server's tokens and repairs what they
// allow, fewest survivors first (then, with RepairByRisk, the riskiest;
// else the longest waiting): a block whose chosen server has no token left
// waits.
func (q *receiverQueue) run(s *state, now time.Duration) {
	for i := range q.tokens {
		q.tokens[i] = min(max(1, q.perTick), q.tokens[i]+q.perTick)
	}
	budget := 2 * len(q.tokens) // placement attempts this pass
	for k := 1; k < len(q.buckets); k++ {
		bucket := q.buckets[k]
		if s.cfg.RepairOrder == RepairByRisk && q.dirty[k] {
			sortByRisk(bucket)
		}
		q.dirty[k] = false
		kept := bucket[:0]
		for _, e := range bucket {
			if e.gen != q.gen[e.b] || int(s.live[e.b]) != k {
				q.waiting--
				continue // stale: repaired, lost or queued again elsewhere
			}
			if budget == 0 {
				kept = append(kept, e)
				continue
			}
			budget--
			n, ok := s.place.repair(s.blockReplicas(e.b))
			if !ok || q.tokens[n] < 1 {
				kept = append(kept, e)
				continue
			}
			q.tokens[n]--
			s.add(e.b, n)
			s.repairs++
			q.waiting--
			q.maxWait = max(q.maxWait, now-e.since)
			if int(s.live[e.b]) < s.cfg.Replicas {
				q.enqueue(s, e.b, e.since)
			}
		}
		q.buckets[k] = kept
	}
	q.next = now + receiverTick
}

// sortByRisk orders a bucket riskiest first, keeping the order of equals.
func sortByRisk(bucket []queued) {
	sort.SliceStable(bucket, func(i, j int) bool {
		return grid.RepairFirst(1, bucket[i].risk, 1, bucket[j].risk)
	})
}
