package maintsim

import (
	"fmt"
	"time"

	"github.com/harvest-platform/harvest/placer/maintenance"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// FromAlibaba makes one allocation per Alibaba 2017 batch task, from its
// create to its end time (relative seconds from origin; the trace has no
// per-instance times, so its instances run together), in its job. Its
// resources are its instances ("containers": the source's cost unit is
// container x second) or its instances x requested cores ("cores").
func FromAlibaba(tasks []schedsim.AlibabaTask, origin time.Time, work string) ([]maintenance.Alloc, error) {
	if work != "containers" && work != "cores" {
		return nil, fmt.Errorf("work %q: want containers or cores", work)
	}
	at := func(s float64) time.Time { return origin.Add(time.Duration(s * float64(time.Second))) }
	out := make([]maintenance.Alloc, 0, len(tasks))
	for _, k := range tasks {
		cpu := float64(k.Instances)
		if work == "cores" {
			cpu *= k.CPU / 100 // the trace requests hundredths of a core
		}
		out = append(out, maintenance.Alloc{Job: k.Job, Start: at(k.Create), End: at(k.End), CPU: cpu})
	}
	return out, nil
}
