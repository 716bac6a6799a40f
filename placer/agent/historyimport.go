package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/pluginimport"
	"github.com/harvest-platform/harvest/internal/setting"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// Defaults of the history_import block.
const (
	defaultHistoryImportInterval = time.Hour
	minHistoryImportLookback     = history.Slot
)

// importSettings is the history_import block, parsed and checked against
// plugin_config.
type importSettings struct {
	plugins            *manager.Config // plugin_dir and the importer's block only
	importer           string
	interval, lookback time.Duration
	tenants            []string
}

// historyImport parses plugin_config and the history_import block (nil, nil
// when history_import is off).
func (c Config) historyImport() (*importSettings, error) {
	var plugins *manager.Config
	if c.PluginConfig != "" {
		src, err := os.ReadFile(c.PluginConfig)
		if err != nil {
			return nil, fmt.Errorf("plugin_config: %w", err)
		}
		if plugins, err = manager.ParseConfig(src, c.PluginConfig); err != nil {
			return nil, fmt.Errorf("plugin_config %q: %w", c.PluginConfig, err)
		}
	}
	h := c.HistoryImport
	if h == nil {
		return nil, nil
	}
	if h.Importer == "" {
		return nil, errors.New("history_import: importer is required: the name of a history_importer block in plugin_config")
	}
	if plugins == nil {
		return nil, fmt.Errorf("history_import: plugin_config is required: the file holding plugin_dir and the history_importer %q block", h.Importer)
	}
	s := &importSettings{importer: h.Importer, interval: defaultHistoryImportInterval}
	var names []string
	for _, b := range plugins.HistoryImporters {
		names = append(names, b.Name)
		if b.Name == h.Importer {
			s.plugins = &manager.Config{PluginDir: plugins.PluginDir, HistoryImporters: []*manager.PluginConfig{b}}
		}
	}
	if s.plugins == nil {
		have := "it has none"
		if len(names) > 0 {
			have = "it has " + strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("history_import: importer %q: plugin_config %q has no history_importer %q block (%s)", h.Importer, c.PluginConfig, h.Importer, have)
	}
	var err error
	if s.interval, err = setting.PositiveDuration("history_import.interval", h.Interval, s.interval); err != nil {
		return nil, err
	}
	s.lookback = 2 * s.interval
	if h.Lookback != "" {
		d, err := time.ParseDuration(h.Lookback)
		if err != nil || d < minHistoryImportLookback {
			return nil, fmt.Errorf("history_import.lookback %q: want a duration of at least %s (one history slot), such as \"2h\"", h.Lookback, minHistoryImportLookback)
		}
		s.lookback = d
	}
	if s.lookback < s.interval {
		return nil, fmt.Errorf("history_import.lookback %s is shorter than interval %s: pulls would leave gaps in the history", s.lookback, s.interval)
	}
	for _, t := range h.Tenants {
		if _, err := history.ParseTenantID(t); err != nil {
			return nil, fmt.Errorf("history_import.tenants: %w", err)
		}
	}
	s.tenants = h.Tenants
	return s, nil
}

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
func newHistoryImporter(s *importSettings, store *history.Store, metrics *Metrics, log hclog.Logger) (*historyImporter, error) {
	m, err := manager.New(s.plugins, manager.Builtins{HistoryImporters: pluginimport.Builtins()},
		manager.Options{Logger: log.Named("plugins"), Registerer: metrics.Registry})
	if err != nil {
		return nil, fmt.Errorf("history_import: %w", err)
	}
	imp, err := m.HistoryImporter(s.importer)
	if err != nil { // checked by historyImport
		m.Close()
		return nil, err
	}
	return &historyImporter{name: s.importer, importer: imp, store: store, interval: s.interval, lookback: s.lookback,
		tenants: s.tenants, now: time.Now, log: log.Named("history_import"), metrics: metrics, plugins: m}, nil
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
	return loop{"history_import", h.interval, func(ctx context.Context) error {
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
