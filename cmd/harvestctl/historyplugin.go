package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/pluginimport"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/manager"
)

// repeatedFlag collects a flag given several times (-tenant, -cgroup).
type repeatedFlag []string

func (c *repeatedFlag) String() string     { return strings.Join(*c, ",") }
func (c *repeatedFlag) Set(v string) error { *c = append(*c, v); return nil }

// pluginImport runs `history import -importer NAME`: the named
// history_importer block of the plugin configuration (a built-in CSV reader
// or an external plugin over go-plugin) streams [from, to) and the tenants'
// series and reimage events go into the store (history/pluginimport, as the
// placer's history_import loop does).
func pluginImport(ctx context.Context, store *history.Store, configPath, name, from, to string, tenants []string) error {
	src, err := os.ReadFile(configPath)
	if err != nil {
		return err
	}
	cfg, err := manager.ParseConfig(src, configPath)
	if err != nil {
		return err
	}
	start, err := csvfmt.ParseTime(from)
	if err != nil {
		return fmt.Errorf("-from: %w", err)
	}
	end, err := csvfmt.ParseTime(to)
	if err != nil || !end.After(start) {
		return fmt.Errorf("-to %q: want a time after -from", to)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "harvestctl", Level: hclog.Warn, Output: os.Stderr})
	m, err := manager.New(cfg, manager.Builtins{HistoryImporters: pluginimport.Builtins()}, manager.Options{Logger: log})
	if err != nil {
		return err
	}
	defer m.Close()
	imp, err := m.HistoryImporter(name)
	if err != nil {
		return err
	}
	rep, err := pluginimport.Run(ctx, store, imp, historyimporter.Range{Start: start, End: end}, tenants)
	if err != nil {
		return fmt.Errorf("importer %s: %w", name, err)
	}
	fmt.Printf("imported %d slots of %d tenants and %d reimage events through importer %s\n", rep.Slots, rep.Tenants, rep.Reimages, name)
	return nil
}
