package cluster

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/labels"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// Node is a harvested Nomad client as the placer's loops see it.
type Node struct {
	ID, Name string
	Meta     map[string]string
	Ready    bool    // status ready and eligible
	Up       bool    // status ready: its client takes meta changes
	Harvest  float64 // harvestable memory, MiB: the driver's capacity minus its reserve
}

// View reads what the placer's loops need of Nomad. The loops share one
// view, so they share its watch of Nomad's lists (watch.go) and its
// caches. The zero View has no Nomad behind it (API-only tests).
type View struct {
	nomad   *nomadapi.Client
	watch   *clusterWatch
	applied *appliedMeta
	nodes   *nodeCache
}

// New is the view of the Nomad nomad is a client of.
func New(nomad *nomadapi.Client) View {
	return View{nomad: nomad, watch: newClusterWatch(nomad), applied: &appliedMeta{nodes: map[string]map[string]string{}},
		nodes: &nodeCache{nodes: map[string]*nomadapi.Node{}}}
}

// nodeCache keeps each node as last read, by its modify index. Node meta
// and attributes are not in Nomad's node list, so each node must be read on
// its own; a node changes (meta, drivers, status) only with a new modify
// index, so a pass over an unchanged cluster costs one list request, not
// one request per node per loop.
type nodeCache struct {
	mu    sync.Mutex
	nodes map[string]*nomadapi.Node
}

// read returns the nodes of the list, reading only those that changed.
func (c *nodeCache) read(ctx context.Context, nomad *nomadapi.Client, stubs []*nomadapi.NodeListStub) ([]*nomadapi.Node, error) {
	q := (&nomadapi.QueryOptions{}).WithContext(ctx)
	out := make([]*nomadapi.Node, 0, len(stubs))
	listed := make(map[string]bool, len(stubs))
	for _, s := range stubs {
		listed[s.ID] = true
		c.mu.Lock()
		n := c.nodes[s.ID]
		c.mu.Unlock()
		if n == nil || n.ModifyIndex != s.ModifyIndex {
			var err error
			if n, _, err = nomad.Nodes().Info(s.ID, q); err != nil {
				return nil, err
			}
			c.mu.Lock()
			c.nodes[s.ID] = n
			c.mu.Unlock()
		}
		out = append(out, n)
	}
	c.mu.Lock()
	for id := range c.nodes {
		if !listed[id] {
			delete(c.nodes, id)
		}
	}
	c.mu.Unlock()
	return out, nil
}

// appliedMeta remembers the dynamic meta the placer applied until the
// server's copy of the node shows it: a client sends its node to the
// servers a few seconds after a meta change, and a loop that trusted the
// stale copy would apply the same change again every pass (or, for the
// partition, take more nodes than it needs).
type appliedMeta struct {
	mu    sync.Mutex
	nodes map[string]map[string]string // node ID -> key -> value ("" = unset)
}

// overlay returns meta with the changes the server does not show yet, and
// forgets those it now shows.
func (a *appliedMeta) overlay(nodeID string, meta map[string]string) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	pending := a.nodes[nodeID]
	if len(pending) == 0 {
		return meta
	}
	out := make(map[string]string, len(meta)+len(pending))
	for k, v := range meta {
		out[k] = v
	}
	for k, v := range pending {
		if meta[k] == v {
			delete(pending, k)
			continue
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

func (a *appliedMeta) record(nodeID string, set map[string]string, unset []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.nodes[nodeID] == nil {
		a.nodes[nodeID] = map[string]string{}
	}
	for k, v := range set {
		a.nodes[nodeID][k] = v
	}
	for _, k := range unset {
		a.nodes[nodeID][k] = ""
	}
}

// HasNomad reports whether a Nomad is behind the view (not the zero View).
func (v View) HasNomad() bool { return v.nomad != nil }

// Start begins the watch of Nomad's lists (watch.go) until ctx ends;
// before it every read goes to Nomad.
func (v View) Start(ctx context.Context, log hclog.Logger) { v.watch.start(ctx, log) }

// Jobs is every job in every namespace, with meta and summaries, as of at
// least minIndex: the index of a write the caller made (0: any).
func (v View) Jobs(ctx context.Context, minIndex uint64) ([]*nomadapi.JobListStub, error) {
	return v.watch.jobs.get(ctx, minIndex)
}

// AllNodes is every node of the watched list, each read from Nomad only
// when it changed.
func (v View) AllNodes(ctx context.Context) ([]*nomadapi.Node, error) {
	stubs, err := v.watch.nodes.get(ctx, 0)
	if err != nil {
		return nil, err
	}
	return v.nodes.read(ctx, v.nomad, stubs)
}

// HarvestedNodes lists the clients that carry a tenant (the nodes the
// placer labels), with their harvestable memory.
func (v View) HarvestedNodes(ctx context.Context) ([]Node, error) {
	nodes, err := v.AllNodes(ctx)
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, n := range nodes {
		if n.Meta[labels.TenantKey] == "" {
			continue
		}
		c := Node{ID: n.ID, Name: n.Name, Meta: v.applied.overlay(n.ID, n.Meta),
			Ready: n.Status == nomadapi.NodeStatusReady && n.SchedulingEligibility == nomadapi.NodeSchedulingEligible,
			Up:    n.Status == nomadapi.NodeStatusReady}
		capacity, okC := mib(n.Attributes[contract.AttrCapacityMemory])
		reserve, okR := mib(n.Attributes[contract.AttrReserveMemory])
		switch {
		case okC && okR:
			c.Harvest = max(0, capacity-reserve)
		case n.NodeResources != nil: // no harvest driver fingerprint: Nomad's view
			c.Harvest = float64(n.NodeResources.Memory.MemoryMB)
			if n.ReservedResources != nil {
				c.Harvest -= float64(n.ReservedResources.Memory.MemoryMB)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// mib parses a driver attribute such as "4096MiB".
func mib(v string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "MiB"), 64)
	return f, err == nil && v != ""
}

// HarvestedJobs returns the harvested jobs (namespace/ID): rewritten by
// the proxy or marked harvest = "true".
func (v View) HarvestedJobs(ctx context.Context) (map[string]*nomadapi.JobListStub, error) {
	jobs, err := v.watch.jobs.get(ctx, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]*nomadapi.JobListStub{}
	for _, j := range jobs {
		if j.Meta[proxy.JobTypeKey] != "" || j.Meta[proxy.HarvestKey] == "true" {
			out[j.Namespace+"/"+j.ID] = j
		}
	}
	return out, nil
}

// Allocations lists every allocation in every namespace with its resources
// and task states.
func (v View) Allocations(ctx context.Context) ([]*nomadapi.AllocationListStub, error) {
	return v.watch.allocs.get(ctx, 0)
}

// AllocationsChanged is a channel closed when the watch next answers with
// a changed allocation list (or fails): a loop that acts on allocations
// ending waits on it instead of its next pass. It is nil (never closed)
// while the watch does not run.
func (v View) AllocationsChanged() <-chan struct{} {
	if v.watch == nil {
		return nil
	}
	return v.watch.allocs.changed()
}

// Running reports whether an allocation holds its resources now.
func Running(a *nomadapi.AllocationListStub) bool {
	return a.DesiredStatus == nomadapi.AllocDesiredStatusRun &&
		(a.ClientStatus == nomadapi.AllocClientStatusRunning || a.ClientStatus == nomadapi.AllocClientStatusPending)
}

// MemoryMB is what an allocation holds of memory.
func MemoryMB(a *nomadapi.AllocationListStub) float64 {
	if a.AllocatedResources == nil {
		return 0
	}
	total := 0.0
	for _, t := range a.AllocatedResources.Tasks {
		if t != nil {
			total += float64(t.Memory.MemoryMB)
		}
	}
	return total
}

// NodeAPI is the view as the refresher's classes.NodeAPI: the node list from the
// watch, each node read only when it changed, and the meta the placer
// applied but the server does not show yet.
type NodeAPI struct{ View View }

var _ classes.NodeAPI = NodeAPI{}

// Nodes is every node with its meta as the placer last applied it.
func (n NodeAPI) Nodes(ctx context.Context) ([]labels.Node, error) {
	nodes, err := n.View.AllNodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]labels.Node, 0, len(nodes))
	for _, node := range nodes {
		out = append(out, labels.Node{ID: node.ID, Name: node.Name, Meta: n.View.applied.overlay(node.ID, node.Meta), Attributes: node.Attributes})
	}
	return out, nil
}

// ApplyMeta applies one node's label update.
func (n NodeAPI) ApplyMeta(ctx context.Context, u labels.Update) error {
	return n.View.ApplyMeta(ctx, u.NodeID, u.Set, u.Unset...)
}

// ApplyMeta sets and unsets one node's dynamic meta.
func (v View) ApplyMeta(ctx context.Context, nodeID string, set map[string]string, unset ...string) error {
	meta := map[string]*string{}
	for k, val := range set {
		meta[k] = &val
	}
	for _, k := range unset {
		meta[k] = nil
	}
	if _, err := v.nomad.Nodes().Meta().Apply(&nomadapi.NodeMetaApplyRequest{NodeID: nodeID, Meta: meta},
		(&nomadapi.QueryOptions{}).WithContext(ctx)); err != nil {
		return err
	}
	v.applied.record(nodeID, set, unset)
	return nil
}
