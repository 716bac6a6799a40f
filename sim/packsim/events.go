// Events and accounting: task ends, node releases, timeline samples and
// the result's totals.

package packsim

import (
	"math"
	"slices"
	"time"

	"github.com/harvest-platform/harvest/placer/packing"
)

// event is a task's end (release false) or a node's release check.
type event struct {
	t       float64
	release bool
	node    int
	mem     float64
	since   float64 // release: the emptySince it was scheduled for
}

// eventOrder orders events by time, ends before releases at the same
// moment (ends free room first); other ties are left to the queue.
func eventOrder(a, b event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return !a.release && b.release
}

func (s *sim) end(e event) {
	n := &s.nodes[e.node]
	n.used -= e.mem
	n.tasks--
	s.running--
	if n.tasks == 0 {
		n.used, n.emptySince = 0, e.t
		s.ev.Push(event{t: e.t + s.cfg.ReleaseDelay, release: true, node: e.node, since: e.t})
	}
}

func (s *sim) release(e event) {
	n := &s.nodes[e.node]
	if n.tasks > 0 || !n.inUse || n.emptySince != e.since {
		return // it got work again, and a later check stands
	}
	n.inUse = false
	s.inUse--
	s.res.NodeHours += (e.t - n.inUseSince) / 3600
}

func (s *sim) sample(t, start float64) {
	base := time.Unix(0, 0)
	at := func(sec float64) time.Time { return base.Add(time.Duration(sec * float64(time.Second))) }
	for i, n := range s.nodes {
		s.view[i] = packing.Node{ID: n.id, Used: n.used, Capacity: s.cfg.NodeMem}
		if n.tasks == 0 {
			s.view[i].EmptySince = at(n.emptySince)
		}
	}
	rel := packing.Releasable(s.view, at(t), time.Duration(s.cfg.ReleaseDelay*float64(time.Second)))
	s.res.Timeline = append(s.res.Timeline, Sample{Hours: (t - start) / 3600, InUse: s.inUse, Releasable: len(rel),
		Running: s.running, Queued: len(s.queue)})
}

func (s *sim) finish(span float64) {
	r := &s.res
	r.SpanHours = span / 3600
	r.ReleasableNodeHours = float64(r.Nodes)*r.SpanHours - r.NodeHours
	if r.SpanHours > 0 {
		r.MeanNodes = r.NodeHours / r.SpanHours
	}
	if r.NodeHours > 0 {
		r.MemUtilisation = s.memHours / (r.NodeHours * s.cfg.NodeMem)
	}
	if len(s.waits) > 0 {
		slices.Sort(s.waits)
		sum := 0.0
		for _, w := range s.waits {
			sum += w
		}
		r.MeanWait = sum / float64(len(s.waits))
		r.P90Wait = s.waits[int(math.Ceil(0.9*float64(len(s.waits))))-1]
		r.MaxWait = s.waits[len(s.waits)-1]
	}
}
