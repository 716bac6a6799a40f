// Command testplugin is a plugin binary for the plugins' own tests: it
// serves a usage source and a history importer that behave as their config
// says, so the tests can run a real plugin process over go-plugin and make
// it crash or hang on cue.
//
// Config (both types):
//
//	mode      normal | crash | hang   what to do once `after` calls/records went well
//	after     N (default 0)           Samples (usage source) or records (importer) served first
//	once_file PATH                    misbehave only if PATH does not exist, creating it first:
//	                                  the restarted plugin then behaves
//	cpu       cores a Sample reports as the primary's (default 1.5)
//	records   series chunks an Import sends (default 5)
package main

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

type behaviour struct {
	mu     sync.Mutex
	config map[string]string
	calls  int
}

func (b *behaviour) SetConfig(c map[string]string) error {
	if m := c["mode"]; m != "" && m != "normal" && m != "crash" && m != "hang" {
		return errors.New("mode: want normal, crash or hang")
	}
	b.mu.Lock()
	b.config = c
	b.mu.Unlock()
	return nil
}

func (b *behaviour) num(key string, def float64) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, err := strconv.ParseFloat(b.config[key], 64); err == nil {
		return v
	}
	return def
}

// step counts one call or record and misbehaves when its turn has come.
func (b *behaviour) step() {
	b.mu.Lock()
	b.calls++
	n, mode, once := b.calls, b.config["mode"], b.config["once_file"]
	b.mu.Unlock()
	if mode == "" || mode == "normal" || float64(n) <= b.num("after", 0) {
		return
	}
	if once != "" {
		if _, err := os.Stat(once); err == nil {
			return
		}
		_ = os.WriteFile(once, nil, 0o644)
	}
	if mode == "crash" {
		time.Sleep(100 * time.Millisecond) // let what was sent reach the host
		os.Exit(3)
	}
	select {} // hang, deaf to the caller's deadline
}

type source struct{ behaviour }

func (s *source) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "testplugin", Type: base.PluginTypeUsageSource, Version: "test"}, nil
}

func (s *source) Sample(context.Context) (usagesource.Usage, error) {
	s.step()
	return usagesource.Usage{Time: time.Now(), CapacityCPUCores: 8, CapacityMemoryBytes: 8 << 30,
		PrimaryCPUCores: s.num("cpu", 1.5), PrimaryMemoryBytes: 1 << 30}, nil
}

type importer struct{ behaviour }

func (i *importer) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: "testplugin", Type: base.PluginTypeHistoryImporter, Version: "test"}, nil
}

func (i *importer) Import(ctx context.Context, r historyimporter.Range, tenants []string, emit func(historyimporter.Record) error) error {
	if len(tenants) == 0 {
		tenants = []string{"test/tenant"}
	}
	for k := range int(i.num("records", 5)) {
		i.step()
		rec := historyimporter.Record{Series: &historyimporter.SeriesChunk{Tenant: tenants[k%len(tenants)], Node: "node-" + strconv.Itoa(k),
			Start: r.Start, StepSeconds: 120, Values: []float64{float64(k), float64(k) + 0.5}}}
		if err := emit(rec); err != nil {
			return err
		}
	}
	return emit(historyimporter.Record{Reimage: &historyimporter.Reimage{Tenant: tenants[0], Node: "node-0", Time: r.Start}})
}

func main() {
	set := usagesource.PluginSet(&source{})
	for k, v := range historyimporter.PluginSet(&importer{}) {
		set[k] = v
	}
	plugin.Serve(&plugin.ServeConfig{HandshakeConfig: base.Handshake, Plugins: set, GRPCServer: plugin.DefaultGRPCServer})
}
