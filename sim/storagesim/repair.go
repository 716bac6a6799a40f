package storagesim

import (
	"container/heap"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/storage/grid"
)

// A repairer re-creates the replicas wipes and drains leave missing, at
// Config.RepairPerHour, limiting what Config.RepairLimit says: each
// reimaged server's queue (reimagedRepairs) or what each live server
// receives (receiverQueue, receiver.go).
type repairer interface {
	// take queues the blocks a server's wipe left under-replicated at now.
	take(s *state, blocks []int32, now time.Duration)
	// due is when the next repair runs (never while nothing waits).
	due() time.Duration
	// run does the repairs due at now.
	run(s *state, now time.Duration)
	// longestHours is the longest a block waited for its repair, in hours.
	longestHours() float64
}

// never is a time no event reaches.
const never = time.Duration(1<<63 - 1)

// reimagedRepairs gives each reimaged server's lost replicas a job of
// their own, re-created one every 1/RepairPerHour hours in the order the
// job was given (RepairLimitReimaged).
type reimagedRepairs struct {
	jobs       jobQueue
	step       time.Duration
	seq        int
	longestJob int
}

func newReimagedRepairs(cfg Config) *reimagedRepairs {
	return &reimagedRepairs{step: time.Duration(float64(time.Hour) / cfg.RepairPerHour)}
}

// take orders a reimaged server's pending blocks (fewest survivors first,
// as the blob repairer and HDFS's under-replication queues order them) and
// starts their job one step from now.
func (r *reimagedRepairs) take(s *state, blocks []int32, now time.Duration) {
	s.order(blocks)
	r.longestJob = max(r.longestJob, len(blocks))
	heap.Push(&r.jobs, &repairJob{next: now + r.step, blocks: blocks, seq: r.seq})
	r.seq++
}

func (r *reimagedRepairs) due() time.Duration {
	if len(r.jobs) == 0 {
		return never
	}
	return r.jobs[0].next
}

func (r *reimagedRepairs) run(s *state, _ time.Duration) {
	job := r.jobs[0]
	s.repairOne(job.blocks[job.i])
	if job.i++; job.i < len(job.blocks) {
		job.next += r.step
		heap.Fix(&r.jobs, 0)
	} else {
		heap.Pop(&r.jobs)
	}
}

func (r *reimagedRepairs) longestHours() float64 { return float64(r.longestJob) * r.step.Hours() }

// repairJob re-creates the replicas one reimaged server lost, one every
// step, in order.
type repairJob struct {
	next   time.Duration
	blocks []int32
	i      int
	seq    int
}

// jobQueue is the jobs by their next repair, then by the order they came.
type jobQueue []*repairJob

func (q jobQueue) Len() int { return len(q) }
func (q jobQueue) Less(i, j int) bool {
	if q[i].next != q[j].next {
		return q[i].next < q[j].next
	}
	return q[i].seq < q[j].seq
}
func (q jobQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *jobQueue) Push(x any)   { *q = append(*q, x.(*repairJob)) }
func (q *jobQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// order sorts a reimaged server's pending blocks as cfg.RepairOrder says.
func (s *state) order(pending []int32) {
	if s.cfg.RepairOrder != RepairByRisk {
		sort.SliceStable(pending, func(i, j int) bool { return s.live[pending[i]] < s.live[pending[j]] })
		return
	}
	risk := make(map[int32]float64, len(pending))
	for _, b := range pending {
		risk[b] = s.risk(b)
	}
	sort.SliceStable(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		return grid.RepairFirst(int(s.live[a]), risk[a], int(s.live[b]), risk[b])
	})
}

// repairOne re-creates one replica of block b unless it is lost or whole
// again.
func (s *state) repairOne(b int32) {
	if s.live[b] == 0 || int(s.live[b]) >= s.cfg.Replicas {
		return
	}
	if n, ok := s.place.repair(s.blockReplicas(b)); ok {
		s.add(b, n)
		s.repairs++
	}
}

// risk is grid.RepairRisk of block b's survivors.
func (s *state) risk(b int32) float64 {
	var ids []string
	for _, n := range s.blockReplicas(b) {
		ids = append(ids, s.w.id[n])
	}
	return s.w.grid.RepairRisk(ids)
}
