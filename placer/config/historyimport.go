package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/setting"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// Defaults of the history_import block.
const (
	defaultHistoryImportInterval = time.Hour
	minHistoryImportLookback     = history.Slot
)

// HistoryImportSettings are the history_import block, parsed and checked
// against plugin_config.
type HistoryImportSettings struct {
	Plugins            *manager.Config // plugin_dir and the importer's block only
	Importer           string
	Interval, Lookback time.Duration
	Tenants            []string
}

// historyImport parses plugin_config and the history_import block (nil, nil
// when history_import is off).
func (c Config) historyImport() (*HistoryImportSettings, error) {
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
	s := &HistoryImportSettings{Importer: h.Importer, Interval: defaultHistoryImportInterval}
	var names []string
	for _, b := range plugins.HistoryImporters {
		names = append(names, b.Name)
		if b.Name == h.Importer {
			s.Plugins = &manager.Config{PluginDir: plugins.PluginDir, HistoryImporters: []*manager.PluginConfig{b}}
		}
	}
	if s.Plugins == nil {
		have := "it has none"
		if len(names) > 0 {
			have = "it has " + strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("history_import: importer %q: plugin_config %q has no history_importer %q block (%s)", h.Importer, c.PluginConfig, h.Importer, have)
	}
	var err error
	if s.Interval, err = setting.PositiveDuration("history_import.interval", h.Interval, s.Interval); err != nil {
		return nil, err
	}
	s.Lookback = 2 * s.Interval
	if h.Lookback != "" {
		d, err := time.ParseDuration(h.Lookback)
		if err != nil || d < minHistoryImportLookback {
			return nil, fmt.Errorf("history_import.lookback %q: want a duration of at least %s (one history slot), such as \"2h\"", h.Lookback, minHistoryImportLookback)
		}
		s.Lookback = d
	}
	if s.Lookback < s.Interval {
		return nil, fmt.Errorf("history_import.lookback %s is shorter than interval %s: pulls would leave gaps in the history", s.Lookback, s.Interval)
	}
	for _, t := range h.Tenants {
		if _, err := history.ParseTenantID(t); err != nil {
			return nil, fmt.Errorf("history_import.tenants: %w", err)
		}
	}
	s.Tenants = h.Tenants
	return s, nil
}
