package classroom

import (
	"context"
	"sync"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// View gives the proxy Algorithm 1's candidates: the stored class
// table joined with what the driver on each labelled node would admit. It
// is cached for ttl, and one refresh serves every caller waiting for it, so
// a burst of job submissions costs one read of Consul and Nomad.
type View struct {
	store *history.Store
	view  cluster.View // shares the policy loops' node cache
	ttl   time.Duration
	now   func() time.Time

	refreshing sync.Mutex // one refresh at a time

	mu      sync.Mutex
	loaded  time.Time
	classes []classify.Class
	nodes   []roomNode
}

var _ interface {
	Candidates(ctx context.Context, jobType string) ([]selectclass.Candidate, error)
} = (*View)(nil)

// New is the class room of the table in store and the nodes of view, read
// again once it is ttl old on the clock now.
func New(store *history.Store, view cluster.View, ttl time.Duration, now func() time.Time) *View {
	return &View{store: store, view: view, ttl: ttl, now: now}
}

// Candidates gives each class's room for a job of jobType: the sum over
// its nodes of what the driver would admit if the primary stood at the
// level the type plans for (Algorithm 1, line 8; classify.ServerRoom). A
// class at its peak with no room on any server offers none, however many
// servers it has.
func (v *View) Candidates(ctx context.Context, jobType string) ([]selectclass.Candidate, error) {
	if err := v.refresh(ctx); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	byName := make(map[string]int, len(v.classes))
	out := make([]selectclass.Candidate, 0, len(v.classes))
	for _, c := range v.classes {
		byName[c.Name] = len(out)
		out = append(out, selectclass.Candidate{Class: c.Name, Pattern: string(c.Pattern)})
	}
	for _, n := range v.nodes {
		i, ok := byName[n.Class]
		if !ok {
			continue // a label the table no longer has
		}
		cpu, mem := n.room(classify.JobType(jobType), v.classes[i])
		out[i].RoomCPU += cpu
		out[i].RoomMemoryMB += mem
	}
	return out, nil
}

func (v *View) fresh() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return !v.loaded.IsZero() && v.now().Sub(v.loaded) < v.ttl
}

func (v *View) refresh(ctx context.Context) error {
	if v.fresh() {
		return nil
	}
	v.refreshing.Lock()
	defer v.refreshing.Unlock()
	if v.fresh() { // another caller refreshed while this one waited
		return nil
	}
	var t api.ClassTable
	if _, err := v.store.GetDocument(ctx, contract.ClassesDocument, &t); err != nil {
		return err
	}
	now := v.now()
	nodes, err := roomNodes(ctx, v.view, v.store, now)
	if err != nil {
		return err
	}
	v.mu.Lock()
	v.classes = make([]classify.Class, len(t.Classes))
	for i, c := range t.Classes {
		v.classes[i] = classes.ClassifierClass(c)
	}
	v.nodes = nodes
	v.loaded = time.Time{}
	if len(nodes) > 0 {
		v.loaded = now // no labelled harvest node yet (labels just applied): look again next time
	}
	v.mu.Unlock()
	return nil
}
