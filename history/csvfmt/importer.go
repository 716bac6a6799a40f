package csvfmt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

// Built-in history importers: the long and reimage CSV formats as
// historyimporter.Importer, so a plugin manager serves them in-process
// beside external importers (config: path = the CSV file; for csv-long,
// strict = "true" stops at a bad row instead of skipping it).
const (
	ImporterLong     = "csv-long"
	ImporterReimages = "csv-reimages"
)

// Importer reads one CSV file of either format.
type Importer struct {
	name, path string
	strict     bool
}

var _ historyimporter.Importer = (*Importer)(nil)

// NewImporter returns the built-in importer called name.
func NewImporter(name string) (*Importer, error) {
	if name != ImporterLong && name != ImporterReimages {
		return nil, fmt.Errorf("csv importer %q: want %s or %s", name, ImporterLong, ImporterReimages)
	}
	return &Importer{name: name}, nil
}

func (i *Importer) SetConfig(config map[string]string) error {
	if config["path"] == "" {
		return errors.New(i.name + ": config path (the CSV file) is required")
	}
	i.path = config["path"]
	switch config["strict"] {
	case "", "false":
	case "true":
		i.strict = true
	default:
		return fmt.Errorf("%s: config strict is %q, want true or false", i.name, config["strict"])
	}
	return nil
}

func (i *Importer) PluginInfo() (*base.PluginInfo, error) {
	return &base.PluginInfo{Name: i.name, Type: base.PluginTypeHistoryImporter, Version: "builtin"}, nil
}

// Import emits the file's records inside r for the tenants named (all
// when none are).
func (i *Importer) Import(ctx context.Context, r historyimporter.Range, tenants []string, emit func(historyimporter.Record) error) error {
	f, err := os.Open(i.path)
	if err != nil {
		return err
	}
	defer f.Close()
	wanted := map[string]bool{}
	for _, t := range tenants {
		wanted[t] = true
	}
	keep := func(id history.TenantID) bool { return len(wanted) == 0 || wanted[id.String()] }
	if i.name == ImporterReimages {
		events, err := ParseReimages(f)
		if err != nil {
			return err
		}
		for id, evs := range events {
			for _, e := range evs {
				if keep(id) && !e.Time.Before(r.Start) && e.Time.Before(r.End) {
					rec := historyimporter.Record{Reimage: &historyimporter.Reimage{Tenant: id.String(), Node: e.Node, Time: e.Time}}
					if err := emit(rec); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	series, _, err := ParseLong(f, LongOptions{Strict: i.strict})
	if err != nil {
		return err
	}
	for id, s := range series {
		if !keep(id) {
			continue
		}
		var vals []float64
		start := time0(r.Start, s)
		for k, v := range s.Values {
			t := s.Start.Add(time.Duration(k) * history.Slot)
			if t.Before(r.Start) || !t.Before(r.End) {
				continue
			}
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			continue
		}
		rec := historyimporter.Record{Series: &historyimporter.SeriesChunk{Tenant: id.String(), Start: start,
			StepSeconds: int64(history.Slot / time.Second), Values: vals}}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(rec); err != nil {
			return err
		}
	}
	return nil
}

// time0 is the first slot of s at or after start.
func time0(start time.Time, s history.Series) time.Time {
	if !s.Start.Before(start) {
		return s.Start
	}
	k := math.Ceil(float64(start.Sub(s.Start)) / float64(history.Slot))
	return s.Start.Add(time.Duration(k) * history.Slot)
}
