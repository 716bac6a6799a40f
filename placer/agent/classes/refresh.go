package classes

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/labels"
)

// NodeAPI is what the refresher needs of Nomad.
type NodeAPI interface {
	Nodes(ctx context.Context) ([]labels.Node, error)
	ApplyMeta(ctx context.Context, u labels.Update) error
}

// Observer is what a refresh reports to (the placer's metrics).
type Observer interface {
	ObserveRefresh(d time.Duration, err error)        // one refresh, failed or not
	ObserveStage(stage string, d time.Duration)       // "read", "classify", "survival"
	ObserveTable(t *api.ClassTable, labelUpdates int) // the table stored
	ObserveRead(st history.CacheStats)                // the history read
}

// Refresher runs one classification and labelling pass at a time.
type Refresher struct {
	Store   *history.Store
	Nodes   NodeAPI
	Config  classify.Config
	Log     hclog.Logger
	Metrics Observer // nil: none
	Now     func() time.Time
	// Retention, when set, prunes each tenant's days older than it.
	Retention time.Duration
	// Thresholds, when set, gives each pass its classifier settings over
	// Config (the placer's stored policy document); an error stops the pass.
	Thresholds func(ctx context.Context, base classify.Config) (classify.Config, error)
	// JobTypes are the proxy's job typing thresholds, where each job type's
	// survival figure is read (zero: jobtype.Default()).
	JobTypes jobtype.Thresholds
	// ReadConcurrency bounds the days of history read at once (default 4).
	ReadConcurrency int
	// SurvivalSample is how many members of a class the survival replay
	// replays at most (0: every member).
	SurvivalSample int

	mu    sync.Mutex // one refresh at a time
	cache *history.Cache

	// members are the node names carrying each class label, as the last
	// refresh left them (the API serves them with the table; only a
	// refresh changes the labels).
	membersMu sync.Mutex
	members   map[string][]string
}

// metrics is the observer, or one that drops everything.
func (r *Refresher) metrics() Observer {
	if r.Metrics == nil {
		return noObserver{}
	}
	return r.Metrics
}

type noObserver struct{}

func (noObserver) ObserveRefresh(time.Duration, error) {}
func (noObserver) ObserveStage(string, time.Duration)  {}
func (noObserver) ObserveTable(*api.ClassTable, int)   {}
func (noObserver) ObserveRead(history.CacheStats)      {}

// Members is, for each class label, the Nomad nodes that carry it: as the
// last refresh left them, or, before this process's first refresh
// succeeded, read from Nomad once.
func (r *Refresher) Members(ctx context.Context) (map[string][]string, error) {
	r.membersMu.Lock()
	defer r.membersMu.Unlock()
	if r.members == nil {
		nodes, err := r.Nodes.Nodes(ctx)
		if err != nil {
			return nil, err
		}
		r.members = labels.Members(nodes, nil)
	}
	return r.members, nil
}

// Refresh classifies every tenant with history, stores the class table and
// brings every node's labels in line with it.
func (r *Refresher) Refresh(ctx context.Context) (*api.ClassTable, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := time.Now()
	table, err := r.refresh(ctx)
	r.metrics().ObserveRefresh(time.Since(start), err)
	if err != nil {
		r.Log.Error("refresh failed", "error", err)
		return nil, err
	}
	unavailable := 0
	for _, c := range table.Classes {
		if c.SurvivalUnavailable != "" {
			unavailable++
			r.Log.Debug("no survival figures", "class", c.Name, "reason", c.SurvivalUnavailable)
		}
	}
	r.Log.Info("refreshed classes", "classes", len(table.Classes), "unclassified", len(table.Unclassified),
		"without_survival", unavailable, "took", time.Since(start).Round(time.Millisecond))
	return table, nil
}

func (r *Refresher) refresh(ctx context.Context) (*api.ClassTable, error) {
	now := r.Now().UTC()
	cfg := r.Config
	if r.Thresholds != nil {
		var err error
		if cfg, err = r.Thresholds(ctx, cfg); err != nil {
			return nil, fmt.Errorf("classifier thresholds: %w", err)
		}
	}
	inputs, broken, err := r.readHistory(ctx, now, cfg.Window)
	if err != nil {
		return nil, err
	}
	classifyStart := time.Now()
	table := classify.Classify(inputs, cfg)
	table.Tenants = append(table.Tenants, broken...)
	r.metrics().ObserveStage("classify", time.Since(classifyStart))

	nodes, err := r.Nodes.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("list nomad nodes: %w", err)
	}
	assign := map[string]labels.Assignment{}
	for _, t := range table.Tenants {
		assign[t.Tenant] = labels.Assignment{Class: t.Class, Pattern: string(t.Pattern)}
	}
	updates := labels.Plan(nodes, assign)
	for _, u := range updates {
		if err := r.Nodes.ApplyMeta(ctx, u); err != nil {
			return nil, fmt.Errorf("label node %s: %w", u.NodeName, err)
		}
		r.Log.Info("labelled node", "node", u.NodeName, "set", u.Set, "unset", u.Unset)
	}
	members := labels.Members(nodes, updates)
	stored := &api.ClassTable{Generated: now, NodeCounts: labels.Counts(nodes, updates)}
	th := r.JobTypes
	if th == (jobtype.Thresholds{}) {
		th = jobtype.Default()
	}
	survivalStart := time.Now()
	stored.Classes = Survival(table.Classes, inputs, cfg.Window, nodes, th, r.SurvivalSample)
	r.metrics().ObserveStage("survival", time.Since(survivalStart))
	r.Log.Debug("survival replayed", "tenants", len(inputs), "took", time.Since(survivalStart).Round(time.Millisecond))
	for _, t := range table.Tenants {
		if t.Class == "" {
			stored.Unclassified = append(stored.Unclassified, api.Unclassified{Tenant: t.Tenant, Reason: t.Reason})
		}
	}
	if err := r.Store.PutDocument(ctx, contract.ClassesDocument, stored); err != nil {
		return nil, err
	}
	r.metrics().ObserveTable(stored, len(updates))
	r.membersMu.Lock()
	r.members = members
	r.membersMu.Unlock()
	return WithNodes(stored, members), nil
}

// WithNodes is a copy of the table whose classes list the Nomad nodes that
// carry their labels (by name), as the API serves it: the stored table
// keeps none, so that it stays far below Consul's value limit however many
// nodes a class has.
func WithNodes(t *api.ClassTable, members map[string][]string) *api.ClassTable {
	out := *t
	out.Classes = make([]api.Class, len(t.Classes))
	for i, c := range t.Classes {
		c.Nodes = members[c.Name]
		if c.Nodes == nil {
			c.Nodes = []string{}
		}
		out.Classes[i] = c
	}
	return &out
}

// readHistory seals the days no driver writes any more, prunes what is
// past retention, brings the in-memory history up to date (reading only
// the days that changed) and returns one input per tenant, each loading
// its window from memory when the classifier gets to it. A tenant whose own
// value is corrupt is returned apart, unclassified with the error.
func (r *Refresher) readHistory(ctx context.Context, now time.Time, window time.Duration) ([]classify.Input, []classify.TenantResult, error) {
	start := time.Now()
	if r.cache == nil {
		c, err := r.Store.NewCache()
		if err != nil {
			return nil, nil, err
		}
		c.Concurrency = r.ReadConcurrency
		r.cache = c
	}
	today := history.DateOf(now)
	from := history.DateOf(now.Add(-window))
	if st, err := r.Store.Seal(ctx, from, today-history.SealAfter); err != nil {
		r.Log.Warn("sealing history failed; will retry at the next refresh", "error", err)
	} else if st.Days > 0 {
		r.Log.Info("sealed history days into bundles", "days", st.Days, "tenant_days", st.Tenants, "keys_deleted", st.Deleted)
	}
	if r.Retention > 0 {
		keep := history.DateOf(now.Add(-r.Retention))
		if n, err := r.Store.PruneDays(ctx, keep); err != nil {
			r.Log.Warn("pruning history failed", "error", err)
		} else if n > 0 {
			r.Log.Debug("pruned history", "days", n)
		}
		if n, err := r.Store.PruneLegacy(ctx, keep); err != nil {
			r.Log.Warn("pruning format-2 history failed", "error", err)
		} else if n > 0 {
			r.Log.Debug("pruned format-2 history", "values", n)
		}
	}
	st, err := r.cache.Refresh(ctx, from, today)
	if err != nil {
		return nil, nil, err
	}
	r.metrics().ObserveRead(st)
	r.Log.Info("read tenant history", "cold", st.Cold, "days_checked", st.DaysChecked, "days_read", st.DaysRead,
		"values", st.Keys, "bytes", st.Bytes, "took", st.Took.Round(time.Millisecond),
		"infos_took", st.InfosTook.Round(time.Millisecond))
	corrupt := r.cache.Corrupt()
	for _, err := range r.cache.BrokenBundles() {
		r.Log.Warn("tenant history unreadable", "error", err)
	}
	var inputs []classify.Input
	var broken []classify.TenantResult
	for _, t := range r.cache.Tenants() {
		name := t.ID().String()
		if err := corrupt[name]; err != nil {
			// one tenant's bad value must not stop the others' labels
			broken = append(broken, classify.TenantResult{Tenant: name, Reason: err.Error()})
			r.Log.Warn("tenant history unreadable", "tenant", name, "error", err)
			continue
		}
		inputs = append(inputs, classify.Input{Tenant: name, Nodes: t.Nodes, Load: func(buf []float64) history.Series {
			return r.cache.Series(name, now.Add(-window), now, buf).Until(now)
		}})
	}
	r.metrics().ObserveStage("read", time.Since(start))
	return inputs, broken, nil
}
