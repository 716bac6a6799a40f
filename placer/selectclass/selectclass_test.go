package selectclass

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

var classes = []Candidate{
	{Class: "constant-1", Pattern: "constant", RoomCPU: 5000, RoomMemoryMB: 16384},          // room 5000
	{Class: "periodic-1", Pattern: "periodic", RoomCPU: 5000, RoomMemoryMB: 16384},          // room 5000
	{Class: "unpredictable-1", Pattern: "unpredictable", RoomCPU: 2000, RoomMemoryMB: 6554}, // room 2000
}

func TestFrequenciesFollowWeightedHeadroom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	const n = 30000
	for i := 0; i < n; i++ {
		out := Select("long", Request{CPU: 1000, MemoryMB: 1024}, classes, DefaultWeights(), rng)
		if out.Fit != "one" || len(out.Classes) != 1 {
			t.Fatalf("outcome %+v", out)
		}
		counts[out.Classes[0]]++
	}
	// long: weights 3 (constant), 2 (periodic), 1 (unpredictable); rooms 5000, 5000, 2000
	total := 3*5000.0 + 2*5000.0 + 1*2000.0
	for class, want := range map[string]float64{"constant-1": 15000 / total, "periodic-1": 10000 / total, "unpredictable-1": 2000 / total} {
		if got := float64(counts[class]) / n; math.Abs(got-want) > 0.01 {
			t.Errorf("%s picked %.3f of the time, want %.3f", class, got, want)
		}
	}
}

func TestOnlyFittingClassesArePicked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1000; i++ {
		out := Select("short", Request{CPU: 4000, MemoryMB: 1024}, classes, DefaultWeights(), rng)
		if out.Classes[0] == "unpredictable-1" {
			t.Fatalf("picked a class with 2000 MHz of room for 4000")
		}
	}
}

func TestMultiClassFallbackAndNoFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	out := Select("medium", Request{CPU: 9000, MemoryMB: 1024}, classes, DefaultWeights(), rng)
	if out.Fit != "combined" || len(out.Classes) < 2 {
		t.Fatalf("9000 MHz over rooms of 5000/5000/2000: %+v", out)
	}
	out = Select("medium", Request{CPU: 13000, MemoryMB: 1024}, classes, DefaultWeights(), rng)
	if out.Fit != "none" || len(out.Classes) != 0 || !strings.Contains(out.Reason, "only 12000 MHz") {
		t.Fatalf("13000 MHz: %+v", out)
	}
	out = Select("medium", Request{CPU: 10, MemoryMB: 1024}, nil, DefaultWeights(), rng)
	if out.Fit != "none" {
		t.Fatalf("no classes: %+v", out)
	}
}

func BenchmarkSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	var cands []Candidate
	for i := 0; i < 23; i++ { // DC-9 had 23 classes
		cands = append(cands, Candidate{Class: string(rune('a' + i)), Pattern: []string{"periodic", "constant", "unpredictable"}[i%3],
			RoomCPU: 50000 * (0.1 + float64(i%7)/10), RoomMemoryMB: 200000 * (0.1 + float64(i%7)/10)})
	}
	w := DefaultWeights()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Select("medium", Request{CPU: 12000, MemoryMB: 16000}, cands, w, rng)
	}
}

func TestRankByWeightedRoom(t *testing.T) {
	cands := []Candidate{
		{Class: "u", Pattern: "unpredictable", RoomCPU: 900},
		{Class: "c", Pattern: "constant", RoomCPU: 500},
		{Class: "p", Pattern: "periodic", RoomCPU: 500},
		{Class: "p2", Pattern: "periodic", RoomCPU: 500},
	}
	// long: constant 3 x 500 = 1500; periodic 2 x 500 = 1000 (p before p2); unpredictable 1 x 900
	got := strings.Join(Rank("long", cands, DefaultWeights()), ",")
	if got != "c,p,p2,u" {
		t.Fatalf("rank %s", got)
	}
}

func TestOutcomeShowsEveryClassConsidered(t *testing.T) {
	out := Select("short", Request{CPU: 4000, MemoryMB: 1024}, classes, DefaultWeights(), rand.New(rand.NewPCG(1, 2)))
	if len(out.Considered) != 3 {
		t.Fatalf("considered %+v, want all 3 classes", out.Considered)
	}
	for _, c := range out.Considered {
		wantFit := c.Class != "unpredictable-1" // 2000 MHz of room for 4000
		if c.Fits != wantFit || c.WeightedRoom != c.RoomCPU*c.Weight {
			t.Errorf("%+v: fits %v, want %v; weighted room = room x weight", c, c.Fits, wantFit)
		}
	}
}
