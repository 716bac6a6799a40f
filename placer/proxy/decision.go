package proxy

import (
	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/placer/dag"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// estimateOf is a DAG estimate as the decision carries it.
func estimateOf(e dag.Estimate) api.Estimate {
	out := api.Estimate{Peak: resourcesOf(e.Peak), Levels: e.Levels}
	for _, l := range e.Level {
		out.Level = append(out.Level, resourcesOf(l))
	}
	return out
}

func resourcesOf(r dag.Resources) api.JobResources {
	return api.JobResources{CPU: r.CPU, MemoryMB: r.MemoryMB, Tasks: r.Tasks}
}

// choiceOf is Algorithm 1's outcome as the decision carries it.
func choiceOf(o selectclass.Outcome) api.ClassChoice {
	out := api.ClassChoice{Classes: o.Classes, Fit: o.Fit, Reason: o.Reason}
	for _, c := range o.Considered {
		out.Considered = append(out.Considered, api.ConsideredClass(c))
	}
	return out
}
