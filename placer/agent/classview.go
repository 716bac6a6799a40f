package agent

import (
	"context"
	"strconv"
	"sync"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// classView gives the proxy Algorithm 1's candidates: the stored class
// table joined with the capacity of the Nomad nodes labelled with each
// class. It is cached for ttl, so a burst of job submissions costs one
// read of Consul and Nomad.
type classView struct {
	store *history.Store
	nomad *nomadapi.Client
	ttl   time.Duration

	mu       sync.Mutex
	loaded   time.Time
	classes  []classify.Class
	capacity map[string][2]float64 // class -> MHz, MB
}

var _ interface {
	Candidates(ctx context.Context, jobType string) ([]selectclass.Candidate, error)
} = (*classView)(nil)

func (v *classView) Candidates(ctx context.Context, jobType string) ([]selectclass.Candidate, error) {
	if err := v.refresh(ctx); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]selectclass.Candidate, 0, len(v.classes))
	for _, c := range v.classes {
		capacity := v.capacity[c.Name]
		h := classify.Headroom(classify.JobType(jobType), c, c.Current)
		out = append(out, selectclass.Candidate{
			Class: c.Name, Pattern: string(c.Pattern), RoomCPU: h * capacity[0], RoomMemoryMB: h * capacity[1],
		})
	}
	return out, nil
}

func (v *classView) refresh(ctx context.Context) error {
	v.mu.Lock()
	fresh := time.Since(v.loaded) < v.ttl
	v.mu.Unlock()
	if fresh {
		return nil
	}
	var t StoredTable
	if _, err := v.store.GetDocument(ctx, ClassesDocument, &t); err != nil {
		return err
	}
	q := (&nomadapi.QueryOptions{}).WithContext(ctx)
	stubs, _, err := v.nomad.Nodes().List(q)
	if err != nil {
		return err
	}
	capacity := map[string][2]float64{}
	for _, s := range stubs {
		if s.Status != "ready" || s.SchedulingEligibility != "eligible" {
			continue
		}
		n, _, err := v.nomad.Nodes().Info(s.ID, q)
		if err != nil {
			return err
		}
		class := n.Meta[labels.ClassKey]
		if class == "" || n.NodeResources == nil {
			continue
		}
		mhz, _ := strconv.ParseFloat(n.Attributes["cpu.totalcompute"], 64)
		c := capacity[class]
		capacity[class] = [2]float64{c[0] + mhz, c[1] + float64(n.NodeResources.Memory.MemoryMB)}
	}
	v.mu.Lock()
	v.classes, v.capacity = t.Classes, capacity
	if len(capacity) > 0 {
		v.loaded = time.Now() // no labelled node yet (labels just applied): look again next time
	}
	v.mu.Unlock()
	return nil
}
