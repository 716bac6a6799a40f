package main

import (
	"context"
	"errors"
	"fmt"
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
