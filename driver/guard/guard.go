package guard

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/contract"
)

// Resources are CPU cores and memory in MiB.
type Resources struct {
	CPU       float64 `json:"cpu_cores"`
	MemoryMiB float64 `json:"memory_mib"`
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{r.CPU + o.CPU, r.MemoryMiB + o.MemoryMiB}
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{r.CPU - o.CPU, r.MemoryMiB - o.MemoryMiB}
}

// Covers reports whether r is at least o in both dimensions.
func (r Resources) Covers(o Resources) bool {
	return r.CPU >= o.CPU-1e-9 && r.MemoryMiB >= o.MemoryMiB-1e-9
}

// RoundUp rounds to whole cores and whole MiB, as the paper measures the
// primary tenant (a tenant using 1.01 cores needs 2).
func RoundUp(r Resources) Resources {
	// max with +0 also turns the -0 that Ceil gives for tiny values into 0
	return Resources{max(0, math.Ceil(r.CPU-1e-9)), max(0, math.Ceil(r.MemoryMiB-1e-9))}
}

// Task is a running harvested task as the guard sees it.
type Task struct {
	ID      string
	Name    string
	Started time.Time
	Alloc   Resources // what the task was allocated by Nomad
}

// State is one observation of a node.
type State struct {
	Capacity Resources // what the node has
	Reserve  Resources // what must stay free for the primary tenant
	Primary  Resources // the primary tenant's measured use (not rounded)
	Tasks    []Task    // running harvested tasks
}

// Allocated is the sum of the tasks' allocations.
func (s State) Allocated() Resources {
	var sum Resources
	for _, t := range s.Tasks {
		sum = sum.Add(t.Alloc)
	}
	return sum
}

// Free is capacity - rounded primary - harvested allocations.
func (s State) Free() Resources {
	return s.Capacity.Sub(RoundUp(s.Primary)).Sub(s.Allocated())
}

// Shortfall is how far Free is below the reserve (zero where it is not).
func (s State) Shortfall() Resources {
	gap := s.Reserve.Sub(s.Free())
	return Resources{math.Max(0, gap.CPU), math.Max(0, gap.MemoryMiB)}
}

// Decision is what the guard decided for one observation.
type Decision struct {
	Evict     []Task    // youngest first
	Shortfall Resources // how much the reserve was broken by, before evicting
	Primary   Resources // the rounded primary the decision used
}

// Reason is the human explanation given to an evicted task.
func (d Decision) Reason() string {
	return contract.EvictionPrefix + fmt.Sprintf("primary tenant needs %.0f cores and %.0f MiB; the reserve was short by %.2f cores and %.0f MiB",
		d.Primary.CPU, d.Primary.MemoryMiB, d.Shortfall.CPU, d.Shortfall.MemoryMiB)
}

// Evictions returns the youngest tasks whose removal restores the reserve,
// stopping as soon as it is restored. If even evicting every task cannot
// restore it, every task is evicted: the primary tenant comes first.
func Evictions(s State) Decision {
	d := Decision{Shortfall: s.Shortfall(), Primary: RoundUp(s.Primary)}
	if d.Shortfall == (Resources{}) {
		return d
	}
	tasks := append([]Task(nil), s.Tasks...)
	sort.SliceStable(tasks, func(i, j int) bool { // youngest first; ties by ID for determinism
		if !tasks[i].Started.Equal(tasks[j].Started) {
			return tasks[i].Started.After(tasks[j].Started)
		}
		return tasks[i].ID < tasks[j].ID
	})
	freed := Resources{}
	for _, t := range tasks {
		if freed.Covers(d.Shortfall) {
			break
		}
		d.Evict = append(d.Evict, t)
		freed = freed.Add(t.Alloc)
	}
	return d
}
