// Package nodes owns the blob tier's storage nodes: one MinIO-compatible
// server per harvested Nomad client.
//
// The registry (this file) keeps each node with the primary tenant,
// environment and rack it belongs to, the harvestable capacity its owner
// declared, and the identity marker written when it joined (a reimage wipes
// the marker, which is how the repairer notices), in Consul KV at
// blob/nodes/<node>. It also turns the registry, the tenants' reimage rates
// and peak CPU into Algorithm 2's grid input.
//
// The pool (Pool, pool.go) is the live set of nodes a front writes to: their
// S3 clients, up and down and identity markers, busy flags, effective
// capacity and the grid over them; the bytes each holds and may still take
// (space.go) and what the other fronts' ledgers add (ledger.go); the calls
// in flight to each, the timeouts and a stalled stream's cancelling, and
// the bucket replicas live in (limits.go); which replica a read
// starts from (readchoice.go); and a reloaded node list (reload.go).
package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/grid"
)

// Node is one registered storage node.
type Node struct {
	ID          string    `json:"id"`
	Tenant      string    `json:"tenant"` // environment/function
	Environment string    `json:"environment"`
	Rack        string    `json:"rack"`
	Endpoint    string    `json:"endpoint"`       // host:port of its S3 API
	Capacity    int64     `json:"capacity_bytes"` // capacity_mb; the front may place by a declared one (front/declared.go)
	Marker      string    `json:"marker"`         // identity marker object's content
	Joined      time.Time `json:"joined"`
}

// Validate checks a registration.
func (n Node) Validate() error {
	switch {
	case n.ID == "" || strings.ContainsAny(n.ID, "/ "):
		return fmt.Errorf("node id %q: want a name without slashes or spaces", n.ID)
	case n.Endpoint == "":
		return fmt.Errorf("node %s: no endpoint", n.ID)
	case n.Capacity <= 0:
		return fmt.Errorf("node %s: capacity must be positive, got %d", n.ID, n.Capacity)
	}
	if _, err := history.ParseTenantID(n.Tenant); err != nil {
		return fmt.Errorf("node %s: %w", n.ID, err)
	}
	return nil
}

// Registry stores nodes in a KV.
type Registry struct {
	kv     history.KV
	prefix string
}

// NewRegistry keeps nodes under prefix (e.g. "harvest/").
func NewRegistry(kv history.KV, prefix string) *Registry {
	return &Registry{kv: kv, prefix: history.KeyPrefix(prefix) + "blob/nodes/"}
}

// Register adds or updates a node.
func (r *Registry) Register(ctx context.Context, n Node) error {
	if err := n.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return history.Update(ctx, r.kv, r.prefix+url.PathEscape(n.ID), func([]byte, bool) ([]byte, error) { return data, nil })
}

// List returns every registered node, by ID.
func (r *Registry) List(ctx context.Context) ([]Node, error) {
	pairs, err := r.kv.List(ctx, r.prefix)
	if err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(pairs))
	for _, p := range pairs {
		var n Node
		if err := json.Unmarshal(p.Value, &n); err != nil {
			return nil, &history.CorruptError{Key: p.Key, Err: err}
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// TenantStats are what Algorithm 2 needs to know of a primary tenant.
type TenantStats struct {
	ReimageRate float64 // reimages per server per month
	PeakCPU     float64 // percent
	// BusyHours (beyond the paper: grid.Tenant.BusyHours) is the share of
	// each hour of the day at which the tenant was busy; nil when unknown.
	BusyHours []float64
}

// ReimageRate is a tenant's reimages per server per month over its history.
func ReimageRate(events []history.Reimage, servers int, span time.Duration) float64 {
	if servers == 0 || span <= 0 {
		return 0
	}
	return float64(len(events)) / float64(servers) / (span.Hours() / (30 * 24))
}

// RecentReimageRate is ReimageRate over the year before now: that year's
// events over the time since the first of them, and at least 35 days (the
// shortest history the placer keeps), so an old history is not divided by
// a short span nor a young one by a long span.
func RecentReimageRate(events []history.Reimage, servers int, now time.Time) float64 {
	from := now.AddDate(-1, 0, 0)
	first := now.Add(-35 * 24 * time.Hour)
	var recent []history.Reimage
	for _, r := range events {
		if r.Time.After(from) && !r.Time.After(now) {
			recent = append(recent, r)
			if r.Time.Before(first) {
				first = r.Time
			}
		}
	}
	return ReimageRate(recent, servers, now.Sub(first))
}

// PeakCPU is a tenant's peak for the grid: the 95th percentile of its CPU
// series, gaps (NaN) left out; 0 without samples (history.Percentile, as
// the classes' peak).
func PeakCPU(values []float64) float64 { return history.Percentile(values, 0.95) }

// BusyHours is, for each hour of the day (UTC), the share of the samples
// of values (slot i at start + i slots) in that hour at or above threshold
// percent, gaps (NaN) left out; an hour without samples counts as busy.
func BusyHours(values []float64, start time.Time, threshold float64) []float64 {
	var busy, seen [24]int
	first := start.UTC()
	offset := first.Sub(first.Truncate(24 * time.Hour))
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		h := int((offset+time.Duration(i)*history.Slot)/time.Hour) % 24
		seen[h]++
		if v >= threshold {
			busy[h]++
		}
	}
	out := make([]float64, 24)
	for h := range out {
		out[h] = 1
		if seen[h] > 0 {
			out[h] = float64(busy[h]) / float64(seen[h])
		}
	}
	return out
}

// GridTenants groups nodes by tenant for grid.Build: each node's free space
// is its capacity less what it holds (used, by node ID); busy nodes are
// marked; tenants without stats are treated as the worst case (frequent
// reimages, high peak) until history says otherwise.
func GridTenants(nodes []Node, stats map[string]TenantStats, used map[string]int64, busy map[string]bool) []*grid.Tenant {
	byTenant := map[string]*grid.Tenant{}
	var order []string
	for _, n := range nodes {
		t := byTenant[n.Tenant]
		if t == nil {
			st, ok := stats[n.Tenant]
			if !ok {
				st = TenantStats{ReimageRate: 1e9, PeakCPU: 100}
			}
			t = &grid.Tenant{ID: n.Tenant, Environment: n.Environment, ReimageRate: st.ReimageRate, PeakCPU: st.PeakCPU, BusyHours: st.BusyHours}
			byTenant[n.Tenant] = t
			order = append(order, n.Tenant)
		}
		t.Nodes = append(t.Nodes, &grid.Node{ID: n.ID, Tenant: n.Tenant, Rack: n.Rack,
			Free: max(0, n.Capacity-used[n.ID]), Busy: busy[n.ID]})
	}
	out := make([]*grid.Tenant, 0, len(order))
	for _, id := range order {
		out = append(out, byTenant[id])
	}
	return out
}
