package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/pluginimport"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// historyImporter pulls tenant history through a history importer plugin
// into the store: at start and every interval, [now - lookback, now) with
// now at a slot boundary. Pulls overlap (PutSeries replaces slots and
// AddReimages drops duplicates, so that is harmless); a pull that fails
// writes nothing, is logged and counted, and the next interval tries again
// (the plugin manager restarts a crashed plugin meanwhile).
type historyImporter struct {
	name               string
	importer           historyimporter.Importer
	store              *history.Store
	interval, lookback time.Duration
	tenants            []string
	now                func() time.Time
	log                hclog.Logger
	metrics            *Metrics
	plugins            *manager.Manager // closed by stop; nil in tests that bring their own importer
}

// newHistoryImporter starts the plugin manager with the importer's block:
// a built-in (csv-long, csv-reimages) or a binary in plugin_dir, its
// harvest_plugin_* metrics in the placer's registry.
func newHistoryImporter(s *config.HistoryImportSettings, store *history.Store, metrics *Metrics, log hclog.Logger) (*historyImporter, error) {
	m, err := manager.New(s.Plugins, manager.Builtins{HistoryImporters: pluginimport.Builtins()},
		manager.Options{Logger: log.Named("plugins"), Registerer: metrics.Registry})
	if err != nil {
		return nil, fmt.Errorf("history_import: %w", err)
	}
	imp, err := m.HistoryImporter(s.Importer)
	if err != nil { // checked by config.Decode
		m.Close()
		return nil, err
	}
	return &historyImporter{name: s.Importer, importer: imp, store: store, interval: s.Interval, lookback: s.Lookback,
		tenants: s.Tenants, now: time.Now, log: log.Named("history_import"), metrics: metrics, plugins: m}, nil
}

// pull imports one range. It may take at most the interval.
func (h *historyImporter) pull(ctx context.Context) error {
	end := h.now().UTC().Truncate(history.Slot)
	r := historyimporter.Range{Start: end.Add(-h.lookback), End: end}
	started := time.Now()
	pctx, cancel := context.WithTimeout(ctx, h.interval)
	defer cancel()
	rep, err := pluginimport.Run(pctx, h.store, h.importer, r, h.tenants)
	took := time.Since(started).Round(time.Millisecond)
	if err != nil {
		if ctx.Err() != nil { // shutting down
			return nil
		}
		h.metrics.historyImportFailures.Inc()
		h.log.Error("history import failed; retrying at the next interval", "importer", h.name,
			"from", r.Start.Format(time.RFC3339), "to", r.End.Format(time.RFC3339), "took", took, "next", h.interval, "error", err)
		return err
	}
	h.metrics.historyImportLast.Set(float64(end.Unix()))
	h.log.Info("imported history", "importer", h.name, "from", r.Start.Format(time.RFC3339), "to", r.End.Format(time.RFC3339),
		"slots", rep.Slots, "tenants", rep.Tenants, "reimages", rep.Reimages, "took", took)
	return nil
}

// loop is the importer's pull, every interval (a pull logs and counts its
// own failures).
func (h *historyImporter) loop() loop {
	tenants := "all the importer knows"
	if len(h.tenants) > 0 {
		tenants = strings.Join(h.tenants, ",")
	}
	h.log.Info("pulling tenant history", "importer", h.name, "interval", h.interval, "lookback", h.lookback, "tenants", tenants)
	return loop{name: "history_import", interval: h.interval, pass: func(ctx context.Context) error {
		_ = h.pull(ctx)
		return nil
	}}
}

// close ends the importer's plugin process, once its loop has ended.
func (h *historyImporter) close() {
	if h.plugins != nil {
		h.plugins.Close()
	}
}
