// Package dag owns a harvested job's stage graph: stages are task groups,
// a stage names its upstream stages in meta { harvest_after = "a,b" }. It
// checks the graph (unknown upstreams, cycles) and estimates the job's peak
// concurrent resources with a breadth-first pass, as Tez-H does
// (history-based-harvesting.txt, Section 4.1, Algorithm 1 line 4: "J.req =
// Max amount of concurrent resources from DAG"): stages whose upstreams are
// all done can run at once, so each BFS level adds up, and the peak is the
// largest level. Pure: the proxy and the simulator share it.
package dag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/harvest-platform/harvest/contract"
)

// AfterKey is the group meta key naming a stage's upstream stages.
const AfterKey = contract.GroupAfter

// Stage is one task group of a job.
type Stage struct {
	Name     string
	After    []string // upstream stages
	Count    int      // tasks in the stage
	CPU      int      // MHz per task
	MemoryMB int      // per task
}

// Resources is an amount of concurrent work.
type Resources struct {
	CPU      int `json:"cpu_mhz"`
	MemoryMB int `json:"memory_mb"`
	Tasks    int `json:"tasks"`
}

func (r Resources) add(o Resources) Resources {
	return Resources{r.CPU + o.CPU, r.MemoryMB + o.MemoryMB, r.Tasks + o.Tasks}
}

// Estimate is the outcome of the breadth-first pass.
type Estimate struct {
	Peak   Resources   `json:"peak"`
	Levels [][]string  `json:"levels"` // stages that can run together, in order
	Level  []Resources `json:"level_resources"`
}

// ParseAfter splits a harvest_after value ("a, b") into stage names.
func ParseAfter(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Error is a graph error; it names the offending stage.
type Error struct {
	Stage string
	Msg   string
}

func (e *Error) Error() string { return fmt.Sprintf("task group %q: %s", e.Stage, e.Msg) }

// Plan checks the stages and computes levels and the peak.
func Plan(stages []Stage) (Estimate, error) {
	byName := map[string]Stage{}
	for _, s := range stages {
		if _, dup := byName[s.Name]; dup {
			return Estimate{}, &Error{s.Name, "appears twice"}
		}
		byName[s.Name] = s
	}
	indegree := map[string]int{}
	downstream := map[string][]string{}
	for _, s := range stages {
		indegree[s.Name] += 0
		for _, up := range s.After {
			if up == s.Name {
				return Estimate{}, &Error{s.Name, "lists itself in " + AfterKey}
			}
			if _, ok := byName[up]; !ok {
				return Estimate{}, &Error{s.Name, fmt.Sprintf("%s names %q, which is not a task group of this job", AfterKey, up)}
			}
			indegree[s.Name]++
			downstream[up] = append(downstream[up], s.Name)
		}
	}
	var est Estimate
	var level []string
	for name, d := range indegree {
		if d == 0 {
			level = append(level, name)
		}
	}
	done := 0
	for len(level) > 0 {
		sort.Strings(level)
		var sum Resources
		var next []string
		for _, name := range level {
			s := byName[name]
			sum = sum.add(Resources{s.CPU * s.Count, s.MemoryMB * s.Count, s.Count})
			for _, d := range downstream[name] {
				if indegree[d]--; indegree[d] == 0 {
					next = append(next, d)
				}
			}
		}
		est.Levels = append(est.Levels, level)
		est.Level = append(est.Level, sum)
		if sum.CPU > est.Peak.CPU || (sum.CPU == est.Peak.CPU && sum.MemoryMB > est.Peak.MemoryMB) {
			est.Peak = sum
		}
		done += len(level)
		level = next
	}
	if done < len(stages) {
		var cyclic []string
		for name, d := range indegree {
			if d > 0 {
				cyclic = append(cyclic, name)
			}
		}
		sort.Strings(cyclic)
		return Estimate{}, &Error{cyclic[0], "is in a cycle of " + AfterKey + " (" + strings.Join(cyclic, ", ") + ")"}
	}
	return est, nil
}
