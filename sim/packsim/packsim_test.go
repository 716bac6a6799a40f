package packsim

import (
	"math"
	"slices"
	"testing"

	"github.com/harvest-platform/harvest/placer/packing"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// burst is n one-slot tasks arriving at 0 and lasting 100 s.
func burst(n int) []Task {
	out := make([]Task, n)
	for i := range out {
		out[i] = Task{Duration: 100, Mem: 1}
	}
	return out
}

// TestSourceExample replays container-packing.txt's example: 10 nodes of 10
// slots, 20 containers, an 80% threshold. Packed: two nodes of eight and one
// of four, in use 100 s plus the 600 s release delay each; spread touches
// nearly every node.
func TestSourceExample(t *testing.T) {
	cfg := Config{Seed: 1, Policy: Packed, Nodes: 10, NodeMem: 10, Packing: packing.Config{HighThreshold: 0.8, MinNodes: 5}, ReleaseDelay: 600}
	s := newSim(cfg)
	s.queue = burst(20)
	s.place(0)
	var loads []float64
	for _, n := range s.nodes {
		loads = append(loads, n.used)
	}
	if !slices.Equal(loads, []float64{8, 8, 4, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("packed loads %v, want 8,8,4 and seven empty nodes", loads)
	}
	packed, err := Run(burst(20), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if packed.NodesTouched != 3 || packed.PeakNodes != 3 || !near(packed.NodeHours, 3*700.0/3600) || packed.MeanWait != 0 {
		t.Fatalf("packed %+v: want 3 nodes for 700 s each, no wait", packed)
	}
	if !near(packed.SpanHours, 700.0/3600) || !near(packed.ReleasableNodeHours, 7*700.0/3600) || !near(packed.MeanNodes, 3) {
		t.Fatalf("packed span %v h, releasable %v node-h, mean nodes %v", packed.SpanHours, packed.ReleasableNodeHours, packed.MeanNodes)
	}
	cfg.Policy = Spread
	spread, _ := Run(burst(20), cfg)
	if spread.NodesTouched < 8 || spread.NodeHours <= packed.NodeHours || spread.Tasks != 20 {
		t.Fatalf("spread %+v: want at least 8 nodes and more node-hours than packed's %v", spread, packed.NodeHours)
	}
	cfg.Policy = BinPack
	if bp, _ := Run(burst(20), cfg); bp.Tasks != 20 || bp.NodeHours < packed.NodeHours {
		t.Fatalf("binpack %+v", bp)
	}
}

// TestFIFOWait: five one-slot nodes, six tasks at once: the sixth waits for
// the first to end, 100 s.
func TestFIFOWait(t *testing.T) {
	r, err := Run(burst(6), Config{Seed: 1, Policy: Spread, Nodes: 5, NodeMem: 1, ReleaseDelay: 0})
	if err != nil {
		t.Fatal(err)
	}
	if r.Tasks != 6 || !near(r.MeanWait, 100.0/6) || r.P90Wait != 100 || r.MaxWait != 100 || !near(r.NodeHours, (5*100+100)/3600.0) {
		t.Fatalf("%+v: want a mean wait of 100/6 s, p90 and max 100 s, 600 node-seconds", r)
	}
	// a task larger than a node is dropped and blocks nobody
	tasks := append(burst(2), Task{Arrival: 0, Duration: 1, Mem: 2})
	if r, _ := Run(tasks, Config{Policy: Spread, Nodes: 5, NodeMem: 1}); r.TooBig != 1 || r.Tasks != 2 || r.MeanWait != 0 {
		t.Fatalf("%+v: want one task too big, two run at once", r)
	}
}

// TestReleaseDelay: one node, tasks at 0-100 s and 300-400 s. With a 600 s
// delay the node stays in use from 0 to 1000 s; with 100 s it is given back
// at 200 s and taken again at 300 s, until 500 s.
func TestReleaseDelay(t *testing.T) {
	tasks := []Task{{Arrival: 300, Duration: 100, Mem: 1}, {Arrival: 0, Duration: 100, Mem: 1}}
	for _, c := range []struct{ delay, used, span float64 }{{600, 1000, 1000}, {100, 400, 500}} {
		r, err := Run(tasks, Config{Policy: Packed, Packing: packing.Default(), Nodes: 1, NodeMem: 1, ReleaseDelay: c.delay, Step: 50})
		if err != nil {
			t.Fatal(err)
		}
		if !near(r.NodeHours, c.used/3600) || !near(r.SpanHours, c.span/3600) || !near(r.ReleasableNodeHours, (c.span-c.used)/3600) {
			t.Errorf("delay %v: %v node-h over %v h, want %v s over %v s", c.delay, r.NodeHours, r.SpanHours, c.used, c.span)
		}
		for _, s := range r.Timeline {
			if s.InUse+s.Releasable != 1 {
				t.Errorf("delay %v at %v h: %d in use, %d releasable", c.delay, s.Hours, s.InUse, s.Releasable)
			}
		}
	}
}

// TestPackingSavesNodeHours on a random workload with a daily cycle; the
// timeline's in-use count agrees with packing.Releasable at every sample.
func TestPackingSavesNodeHours(t *testing.T) {
	w := DefaultSynthetic(7)
	w.Hours, w.MeanRunning = 12, 100
	tasks := w.Tasks()
	res := map[Policy]Result{}
	for _, p := range []Policy{Spread, BinPack, Packed} {
		r, err := Run(tasks, Config{Seed: 3, Policy: p, Nodes: 60, NodeMem: 6144, Packing: packing.Default(), ReleaseDelay: 600, Step: 300})
		if err != nil {
			t.Fatal(err)
		}
		if r.Tasks != len(tasks) || len(r.Timeline) == 0 {
			t.Fatalf("%s ran %d of %d tasks, %d samples", p, r.Tasks, len(tasks), len(r.Timeline))
		}
		for _, s := range r.Timeline {
			if s.InUse+s.Releasable != r.Nodes {
				t.Fatalf("%s at %.2f h: %d in use + %d releasable != %d nodes", p, s.Hours, s.InUse, s.Releasable, r.Nodes)
			}
		}
		res[p] = r
	}
	if res[Packed].NodeHours >= res[Spread].NodeHours {
		t.Fatalf("packed %.1f node-h, spread %.1f: packing saved nothing", res[Packed].NodeHours, res[Spread].NodeHours)
	}
	t.Logf("node-hours: spread %.1f, binpack %.1f, packed %.1f", res[Spread].NodeHours, res[BinPack].NodeHours, res[Packed].NodeHours)
	again, _ := Run(tasks, Config{Seed: 3, Policy: Spread, Nodes: 60, NodeMem: 6144, ReleaseDelay: 600, Step: 300})
	if again.NodeHours != res[Spread].NodeHours || again.MeanWait != res[Spread].MeanWait {
		t.Fatal("the same seed gave a different run")
	}
}

// TestPackingOffBelowMinNodes: the packed policy falls back to spread.
func TestPackingOffBelowMinNodes(t *testing.T) {
	w := DefaultSynthetic(2)
	w.Hours, w.MeanRunning = 3, 12
	tasks := w.Tasks()
	cfg := Config{Seed: 5, Policy: Packed, Nodes: 4, NodeMem: 6144, Packing: packing.Default(), ReleaseDelay: 600}
	packed, err1 := Run(tasks, cfg)
	cfg.Policy = Spread
	spread, err2 := Run(tasks, cfg)
	if err1 != nil || err2 != nil || packed.Tasks == 0 {
		t.Fatalf("%v, %v, %d tasks run", err1, err2, packed.Tasks)
	}
	if packed.NodeHours != spread.NodeHours || packed.MeanWait != spread.MeanWait {
		t.Fatalf("below MinNodes packed %v node-h, spread %v", packed.NodeHours, spread.NodeHours)
	}
	if _, err := Run(tasks, Config{Policy: "best", Nodes: 1, NodeMem: 1}); err == nil {
		t.Fatal("unknown policy accepted")
	}
}

func TestFromAlibaba(t *testing.T) {
	trace := []schedsim.AlibabaTask{
		{Create: 100, End: 160, Job: "7", Instances: 3, Mem: 0.01},
		{Create: -20, End: 40, Job: "9", Instances: 2}, // no memory request
		{Create: 50, End: 55, Job: "7", Instances: 1, Mem: 0.5},
	}
	tasks, st := FromAlibaba(trace, 1000, 1, 1)
	want := []Task{{0, 5, 500}, {50, 60, 10}, {50, 60, 10}, {50, 60, 10}}
	if !slices.Equal(tasks, want) || st != (TraceStats{Tasks: 3, NoMemory: 1, Instances: 4, KeptInstance: 4}) {
		t.Fatalf("%v %+v", tasks, st)
	}
	many := []schedsim.AlibabaTask{{Create: 0, End: 10, Instances: 100000, Mem: 0.01}}
	if tasks, _ := FromAlibaba(many, 1000, 0.01, 1); len(tasks) < 800 || len(tasks) > 1200 {
		t.Fatalf("sampled %d of 100000 at 1%%", len(tasks))
	}
}

func TestSynthetic(t *testing.T) {
	w := DefaultSynthetic(1)
	tasks := w.Tasks()
	var busy float64
	for _, k := range tasks {
		busy += k.Duration
	}
	if running := busy / (w.Hours * 3600); running < 180 || running > 220 {
		t.Fatalf("%.0f tasks running on average, want about %.0f", running, w.MeanRunning)
	}
}

func TestPeakMem(t *testing.T) {
	tasks := []Task{{0, 10, 1}, {5, 10, 2}, {10, 5, 4}, {20, 1, 3}}
	// 0-5: 1; 5-10: 3; at 10 the first ends as the third starts: 6; 20: 3
	if p := PeakMem(tasks); p != 6 {
		t.Fatalf("peak %v, want 6", p)
	}
}
