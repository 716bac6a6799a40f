package schedsim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/survival"
)

// DefaultSurvivalLengths are the task lengths survival is reported for:
// the placer's published grid.
func DefaultSurvivalLengths() []time.Duration { return survival.DefaultLengths() }

// ClassSurvival compares, for one class, the survival the history window
// predicts (placer/survival, the figures the placer publishes) with what
// happened to the span's tasks on the class's servers.
type ClassSurvival struct {
	Class   string          `json:"class"`
	Pattern string          `json:"pattern"`
	Points  []SurvivalPoint `json:"points"`
	// MaxGap is the largest |predicted - observed| over the points with at
	// least MinSurvivalTasks observed tasks, in probability (0-1).
	MaxGap float64 `json:"max_gap"`
}

// SurvivalPoint is one task length.
type SurvivalPoint struct {
	Length    time.Duration        `json:"length"`
	Predicted survival.Probability `json:"predicted"`
	Observed  survival.Probability `json:"observed"`       // share of the tasks of about this length that ran to their end
	Tasks     int                  `json:"observed_tasks"` // that ended or were killed in the span
}

// MinSurvivalTasks is how many observed tasks a point needs to count in
// MaxGap.
const MinSurvivalTasks = 200

// survivalCounts counts, per class and length bucket, the tasks that ended
// and those that were killed.
type survivalCounts struct {
	lengths []time.Duration
	buckets survival.Buckets
	ended   [][]int // [class][bucket]
	killed  [][]int
}

func newSurvivalCounts(s *sim) *survivalCounts {
	ls := s.cfg.SurvivalLengths
	c := &survivalCounts{lengths: ls, buckets: survival.NewBuckets(ls)}
	n := len(s.classes.table.Classes)
	c.ended, c.killed = make([][]int, n), make([][]int, n)
	for i := range c.ended {
		c.ended[i], c.killed[i] = make([]int, len(ls)), make([]int, len(ls))
	}
	return c
}

// observe counts a task that ended (killed false) or was killed.
func (c *survivalCounts) observe(s *sim, ct *container, killed bool) {
	class := s.servers[ct.server].class
	if class < 0 {
		return
	}
	k := c.buckets.Of(ct.task)
	if killed {
		c.killed[class][k]++
	} else {
		c.ended[class][k]++
	}
}

// results predicts each class's survival from the (scaled) history window
// of its tenants, on the simulated servers (reserve and admission margin as
// the driver keeps them), with the workload's own task lengths as the
// replay's mix, and sets the observed shares beside it.
func (c *survivalCounts) results(s *sim) []ClassSurvival {
	if s.cfg.Policy == Stock {
		return nil // nothing is killed
	}
	hist := s.cfg.HistoryDays * history.SlotsPerDay
	members := make([][]survival.Series, len(s.classes.table.Classes))
	for t, ci := range s.classes.classOf {
		if ci < 0 {
			continue
		}
		v := make([]float64, hist)
		for k := range v {
			v[k] = s.series(t, k)
		}
		members[ci] = append(members[ci], survival.Series{Percent: v, Weight: float64(s.cfg.Tenants[t].Servers)})
	}
	srv := survival.Server{Cores: float64(s.cfg.Cores), Reserve: s.cfg.Reserve, Margin: s.cfg.AdmitMargin}
	mix := s.taskLengths(4000)
	var out []ClassSurvival
	for ci, cl := range s.classes.table.Classes {
		cs := ClassSurvival{Class: cl.Name, Pattern: string(cl.Pattern)}
		for k, p := range survival.Curve(members[ci], srv, history.Slot, c.lengths, mix) {
			n := c.ended[ci][k] + c.killed[ci][k]
			pt := SurvivalPoint{Length: p.Length, Predicted: p.Probability, Observed: survival.Probability(math.NaN()), Tasks: n}
			if n > 0 {
				pt.Observed = survival.Probability(float64(c.ended[ci][k]) / float64(n))
			}
			if n >= MinSurvivalTasks && p.Probability.Known() {
				cs.MaxGap = math.Max(cs.MaxGap, math.Abs(float64(pt.Predicted-pt.Observed)))
			}
			cs.Points = append(cs.Points, pt)
		}
		out = append(out, cs)
	}
	return out
}

// taskLengths samples the (scaled) workload's task lengths, each job's
// tasks in proportion to their number: what a server's tasks are made of.
func (s *sim) taskLengths(n int) []float64 {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, 0x7a5c))
	var all []float64
	for len(all) < 50*n {
		for _, st := range s.cfg.Mix.draw(rng).scaled(s.scale, rng).stages {
			all = append(all, st...)
		}
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = all[rng.IntN(len(all))]
	}
	return out
}
