package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

// step is the history's slot.
const step = 2 * time.Minute

type config struct {
	api                            v1.API
	queries, reimageQueries        map[string]string
	queryTemplate, reimageTemplate string
	nodeLabel                      model.LabelName
	chunkSteps                     int
	timeout                        time.Duration
}

// importer is the plugin's historyimporter.Importer.
type importer struct {
	log hclog.Logger
	mu  sync.Mutex
	cfg *config
}

var _ historyimporter.Importer = (*importer)(nil)

func (im *importer) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "harvest-import-prometheus", Type: base.PluginTypeHistoryImporter, Version: "0.1.0"}, nil
}

func (im *importer) SetConfig(c map[string]string) error {
	cfg := &config{queries: map[string]string{}, reimageQueries: map[string]string{}, queryTemplate: c["query_template"],
		reimageTemplate: c["reimage_query_template"], nodeLabel: "instance", chunkSteps: 10000, timeout: 2 * time.Minute}
	if c["address"] == "" {
		return errors.New("address: the Prometheus base URL is required")
	}
	client, err := api.NewClient(api.Config{Address: c["address"]})
	if err != nil {
		return fmt.Errorf("address: %w", err)
	}
	cfg.api = v1.NewAPI(client)
	for k, v := range c {
		if t, ok := strings.CutPrefix(k, "query."); ok {
			cfg.queries[t] = v
		} else if t, ok := strings.CutPrefix(k, "reimage_query."); ok {
			cfg.reimageQueries[t] = v
		}
	}
	if v := c["node_label"]; v != "" {
		cfg.nodeLabel = model.LabelName(v)
	}
	if v := c["chunk_steps"]; v != "" {
		if cfg.chunkSteps, err = strconv.Atoi(v); err != nil || cfg.chunkSteps < 1 || cfg.chunkSteps > 11000 {
			return fmt.Errorf("chunk_steps %q: want 1 to 11000", v)
		}
	}
	if v := c["timeout"]; v != "" {
		if cfg.timeout, err = time.ParseDuration(v); err != nil || cfg.timeout <= 0 {
			return fmt.Errorf("timeout %q: want a positive duration", v)
		}
	}
	im.mu.Lock()
	im.cfg = cfg
	im.mu.Unlock()
	return nil
}

// query returns the tenant's query from its own key or the template.
func query(own map[string]string, template, tenant string) string {
	if q, ok := own[tenant]; ok {
		return q
	}
	if template == "" {
		return ""
	}
	env, fn, _ := strings.Cut(tenant, "/")
	return strings.NewReplacer("$tenant", tenant, "$environment", env, "$function", fn).Replace(template)
}

// Import queries each tenant window by window and emits what comes back.
func (im *importer) Import(ctx context.Context, r historyimporter.Range, tenants []string, emit func(historyimporter.Record) error) error {
	im.mu.Lock()
	cfg := im.cfg
	im.mu.Unlock()
	if cfg == nil {
		return errors.New("not configured")
	}
	if len(tenants) == 0 {
		for t := range cfg.queries {
			tenants = append(tenants, t)
		}
		sort.Strings(tenants)
	}
	first := r.Start.UTC().Truncate(step)
	if first.Before(r.Start) {
		first = first.Add(step)
	}
	if !first.Before(r.End) {
		return nil
	}
	last := first.Add((r.End.Sub(first) - 1) / step * step) // the last slot before End
	for _, tenant := range tenants {
		env, fn, ok := strings.Cut(tenant, "/")
		if !ok || env == "" || fn == "" || strings.Contains(fn, "/") {
			return fmt.Errorf("tenant %q: want environment/function", tenant)
		}
		q, rq := query(cfg.queries, cfg.queryTemplate, tenant), query(cfg.reimageQueries, cfg.reimageTemplate, tenant)
		if q == "" {
			return fmt.Errorf("tenant %q: no query.%s and no query_template", tenant, tenant)
		}
		seen := map[string]float64{} // each node's last reimage-query value
		window := time.Duration(cfg.chunkSteps-1) * step
		for ws := first; !ws.After(last); ws = ws.Add(window + step) {
			we := ws.Add(window)
			if we.After(last) {
				we = last
			}
			if err := im.series(ctx, cfg, tenant, q, ws, we, emit); err != nil {
				return err
			}
			if rq == "" {
				continue
			}
			if err := im.reimages(ctx, cfg, tenant, rq, ws, we, seen, emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// queryRange runs one stepped query and returns its series.
func (im *importer) queryRange(ctx context.Context, cfg *config, q string, ws, we time.Time) (model.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	v, warnings, err := cfg.api.QueryRange(ctx, q, v1.Range{Start: ws, End: we, Step: step})
	if err != nil {
		return nil, fmt.Errorf("query_range %s [%s, %s]: %w", q, ws.Format(time.RFC3339), we.Format(time.RFC3339), err)
	}
	for _, w := range warnings {
		im.log.Warn("Prometheus warned", "query", q, "warning", w)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query_range %s: got a %s, want a matrix", q, v.Type())
	}
	return m, nil
}

func (im *importer) series(ctx context.Context, cfg *config, tenant, q string, ws, we time.Time, emit func(historyimporter.Record) error) error {
	m, err := im.queryRange(ctx, cfg, q, ws, we)
	if err != nil {
		return err
	}
	n := int(we.Sub(ws)/step) + 1
	for _, s := range m {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = math.NaN()
		}
		observed := false
		for _, p := range s.Values {
			off := p.Timestamp.Time().Sub(ws)
			if i := int(off / step); off >= 0 && off%step == 0 && i < n && !math.IsInf(float64(p.Value), 0) {
				vals[i] = float64(p.Value)
				observed = observed || !math.IsNaN(vals[i])
			}
		}
		if !observed {
			continue
		}
		rec := historyimporter.Record{Series: &historyimporter.SeriesChunk{Tenant: tenant, Node: node(s.Metric, cfg.nodeLabel),
			Start: ws, StepSeconds: int64(step / time.Second), Values: vals}}
		if err := emit(rec); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) reimages(ctx context.Context, cfg *config, tenant, q string, ws, we time.Time, seen map[string]float64, emit func(historyimporter.Record) error) error {
	m, err := im.queryRange(ctx, cfg, q, ws, we)
	if err != nil {
		return err
	}
	for _, s := range m {
		n := node(s.Metric, cfg.nodeLabel)
		for _, p := range s.Values {
			v := float64(p.Value)
			prev, ok := seen[n]
			seen[n] = v
			if ok && v != prev {
				rec := historyimporter.Record{Reimage: &historyimporter.Reimage{Tenant: tenant, Node: n, Time: p.Timestamp.Time().UTC()}}
				if err := emit(rec); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// node names a result series' node: its node label, else its whole label set.
func node(m model.Metric, label model.LabelName) string {
	if v, ok := m[label]; ok && v != "" {
		return string(v)
	}
	return m.String()
}
