// Package selectclass is Algorithm 1 of history-based-harvesting.txt
// (Section 4.1, "Class selection algorithm"): given the utilisation classes,
// each class's headroom for the job's type and ranking weights per (job
// type, pattern), pick one class that fits the job's peak concurrent
// resources, with probability proportional to its weighted headroom; else
// several classes that fit together; else none. Pure; the random source is
// the caller's, so tests are deterministic.
package selectclass

import (
	"fmt"
	"sort"
	"strings"
)

// Candidate is one class as Algorithm 1 sees it: its room for the job's
// type, line 8's Headroom(J.type, c) as an amount. The caller sums, over
// the class's servers, what the driver would admit on each if its primary
// stood at the level the job's type plans for (classify.ServerRoom), so a
// class whose servers have no room at that level offers none, however
// large it is.
type Candidate struct {
	Class        string
	Pattern      string
	RoomCPU      float64 // MHz
	RoomMemoryMB float64
}

// Room is what the class has free for the job.
func (c Candidate) Room() (cpu, mem float64) { return c.RoomCPU, c.RoomMemoryMB }

// Request is the job's peak concurrent need (line 4).
type Request struct {
	CPU      float64 // MHz
	MemoryMB float64
}

// Weights are the ranking weights W[type][pattern].
type Weights map[string]map[string]float64

// DefaultWeights rank, as Section 4.1 does: long jobs constant > periodic >
// unpredictable; medium periodic > constant > unpredictable; short
// unpredictable > periodic > constant.
func DefaultWeights() Weights {
	return Weights{
		"long":   {"constant": 3, "periodic": 2, "unpredictable": 1},
		"medium": {"periodic": 3, "constant": 2, "unpredictable": 1},
		"short":  {"unpredictable": 3, "periodic": 2, "constant": 1},
	}
}

// Rand is the random source (math/rand/v2's *Rand satisfies it).
type Rand interface{ Float64() float64 }

// Outcome says what was picked and why.
type Outcome struct {
	Classes []string `json:"classes"`
	Fit     string   `json:"fit"` // "one", "combined" or "none"
	Reason  string   `json:"reason"`
	// Considered is every class as line 6 and 8 saw it, in class order:
	// what harvestctl explain shows.
	Considered []Considered `json:"considered,omitempty"`
}

// Considered is one class as Algorithm 1 weighed it for a job.
type Considered struct {
	Class        string  `json:"class"`
	Pattern      string  `json:"pattern"`
	RoomCPU      float64 `json:"room_cpu_mhz"`
	RoomMemoryMB float64 `json:"room_memory_mb"`
	Weight       float64 `json:"weight"`        // W[type, pattern]
	WeightedRoom float64 `json:"weighted_room"` // line 6
	Fits         bool    `json:"fits"`          // line 8: alone it holds the job's peak
}

// Select runs Algorithm 1 for a job of type jobType needing req.
func Select(jobType string, req Request, cands []Candidate, w Weights, rng Rand) Outcome {
	weighted := func(c Candidate) float64 { // line 6: c.weightedroom
		cpu, _ := c.Room()
		return cpu * w[jobType][c.Pattern]
	}
	var fits []Candidate // line 8: F
	var totalCPU, totalMem float64
	considered := make([]Considered, 0, len(cands))
	for _, c := range cands {
		cpu, mem := c.Room()
		totalCPU, totalMem = totalCPU+cpu, totalMem+mem
		fit := cpu >= req.CPU && mem >= req.MemoryMB && weighted(c) > 0
		if fit {
			fits = append(fits, c)
		}
		considered = append(considered, Considered{Class: c.Class, Pattern: c.Pattern, RoomCPU: cpu, RoomMemoryMB: mem,
			Weight: w[jobType][c.Pattern], WeightedRoom: weighted(c), Fits: fit})
	}
	sort.Slice(considered, func(i, j int) bool { return considered[i].Class < considered[j].Class })
	out := select1(jobType, req, cands, fits, totalCPU, totalMem, weighted, rng)
	out.Considered = considered
	return out
}

// select1 is lines 9-17 over the fitting classes F.
func select1(jobType string, req Request, cands, fits []Candidate, totalCPU, totalMem float64, weighted func(Candidate) float64, rng Rand) Outcome {
	if len(fits) > 0 { // lines 9-11
		c := pick(fits, weighted, rng)
		cpu, mem := c.Room()
		return Outcome{Classes: []string{c.Class}, Fit: "one", Reason: fmt.Sprintf(
			"%s job needs %.0f MHz and %.0f MB at its peak; %d of %d classes fit; picked %s (%s, room %.0f MHz and %.0f MB) with probability proportional to weighted headroom",
			jobType, req.CPU, req.MemoryMB, len(fits), len(cands), c.Class, c.Pattern, cpu, mem)}
	}
	if totalCPU >= req.CPU && totalMem >= req.MemoryMB { // lines 12-14
		pool := append([]Candidate(nil), cands...)
		var chosen []string
		var cpu, mem float64
		for (cpu < req.CPU || mem < req.MemoryMB) && len(pool) > 0 {
			c := pick(pool, func(c Candidate) float64 { return max(weighted(c), 1e-9) }, rng)
			chosen = append(chosen, c.Class)
			rc, rm := c.Room()
			cpu, mem = cpu+rc, mem+rm
			for i := range pool {
				if pool[i].Class == c.Class {
					pool = append(pool[:i], pool[i+1:]...)
					break
				}
			}
		}
		sort.Strings(chosen)
		return Outcome{Classes: chosen, Fit: "combined", Reason: fmt.Sprintf(
			"%s job needs %.0f MHz and %.0f MB at its peak; no class fits alone; %s together have %.0f MHz and %.0f MB",
			jobType, req.CPU, req.MemoryMB, strings.Join(chosen, ", "), cpu, mem)}
	}
	return Outcome{Fit: "none", Reason: fmt.Sprintf( // lines 15-17
		"%s job needs %.0f MHz and %.0f MB at its peak; all %d classes together have only %.0f MHz and %.0f MB free for it",
		jobType, req.CPU, req.MemoryMB, len(cands), totalCPU, totalMem)}
}

// pick draws one candidate with probability proportional to weight.
func pick(cands []Candidate, weight func(Candidate) float64, rng Rand) Candidate {
	sort.Slice(cands, func(i, j int) bool { return cands[i].Class < cands[j].Class }) // deterministic order
	total := 0.0
	for _, c := range cands {
		total += weight(c)
	}
	u := rng.Float64() * total
	for _, c := range cands {
		if u -= weight(c); u < 0 {
			return c
		}
	}
	return cands[len(cands)-1]
}

// Rank orders the classes by weighted room for a job type, the most first
// (line 6's c.weightedroom), ties by name. Escalation widens a blocked
// job's classes in this order.
func Rank(jobType string, cands []Candidate, w Weights) []string {
	sorted := append([]Candidate(nil), cands...)
	weighted := func(c Candidate) float64 {
		cpu, _ := c.Room()
		return cpu * w[jobType][c.Pattern]
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		wi, wj := weighted(sorted[i]), weighted(sorted[j])
		if wi != wj {
			return wi > wj
		}
		return sorted[i].Class < sorted[j].Class
	})
	out := make([]string, len(sorted))
	for i, c := range sorted {
		out[i] = c.Class
	}
	return out
}
