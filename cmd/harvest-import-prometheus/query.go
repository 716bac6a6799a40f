package main

import (
	"context"
	"fmt"
	"math"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

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
