package testbed

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// primary is one client's primary tenant: its history window and span,
// dated so that the span starts when the run does.
type primary struct {
	ID     history.TenantID
	Series history.Series
}

// primaries returns a tenant per client, each series holding HistoryDays
// and the span, moved to start HistoryDays before spanStart.
func (c Config) primaries(spanStart time.Time) ([]primary, error) {
	slots := c.HistoryDays*history.SlotsPerDay + int(math.Ceil(c.TraceHours*3600/history.Slot.Seconds())) + 1
	var all []primary
	if c.HistoryFile == "" {
		p := synth.Profiles(c.Seed, c.Clients)[c.Profile]
		p.Days = slots/history.SlotsPerDay + 2
		for _, t := range synth.Generate(p).Tenants {
			all = append(all, primary{ID: t.ID, Series: t.Series})
		}
	} else {
		read, err := readLong(c.HistoryFile)
		if err != nil {
			return nil, err
		}
		for id, s := range read {
			all = append(all, primary{ID: id, Series: s})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].ID.String() < all[j].ID.String() })
	}
	var out []primary
	var short []string
	for _, p := range all {
		if len(out) == c.Clients {
			break
		}
		if len(p.Series.Values) < slots || hasNaN(p.Series.Values[:slots]) {
			short = append(short, fmt.Sprintf("%s (%s)", p.ID, time.Duration(len(p.Series.Values))*history.Slot))
			continue
		}
		out = append(out, primary{ID: p.ID, Series: history.Series{
			Start: spanStart.Add(-time.Duration(c.HistoryDays) * 24 * time.Hour), Values: p.Series.Values[:slots]}})
	}
	if len(out) < c.Clients {
		return nil, fmt.Errorf("%d tenants cover %d days of history and %g trace hours, %d clients asked; too short: %s",
			len(out), c.HistoryDays, c.TraceHours, c.Clients, strings.Join(short, ", "))
	}
	return out, nil
}

func hasNaN(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

func readLong(path string) (map[history.TenantID]history.Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := csvfmt.Decompress(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	series, _, err := csvfmt.ParseLong(r, csvfmt.LongOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return series, nil
}

// writeLong writes the tenants' series, cut at `until` (exclusive), as a
// long CSV.
func writeLong(path string, ps []primary, until time.Time) error {
	series := map[history.TenantID]history.Series{}
	for _, p := range ps {
		n := min(len(p.Series.Values), int(until.Sub(p.Series.Start)/history.Slot))
		series[p.ID] = history.Series{Start: p.Series.Start, Values: p.Series.Values[:n]}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := csvfmt.WriteLong(f, series); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// simConfig is the simulator's configuration of the same testbed: the
// clients' tenants one server each, the same cores, reserve, history,
// span, seed and stream, and the mechanisms of Nomad and the driver (the
// production preset's: one allocation per task, binpack of two, room the
// driver would admit, the driver's admission margin).
func (c Config) simConfig(ps []primary) schedsim.Config {
	cfg := schedsim.Production()
	cfg.Source = "testbed"
	cfg.Seed = c.Seed
	cfg.Cores, cfg.Reserve = c.NodeCores, c.ReserveCores
	cfg.HistoryDays = c.HistoryDays
	cfg.Span = time.Duration(c.TraceHours * float64(time.Hour))
	cfg.JobsPerHour, cfg.OfferedLoad, cfg.JobScale = c.JobsPerHour, c.OfferedLoad, c.JobScale
	cfg.Mix = schedsim.TPCDSMix()
	cfg.Factor, cfg.Scaling = 1, schedsim.Linear
	for _, p := range ps {
		cfg.Tenants = append(cfg.Tenants, schedsim.Tenant{ID: p.ID.String(), Servers: 1, Series: p.Series})
	}
	switch c.Policy {
	case Stock:
		cfg.Policy = schedsim.Stock
	case PT:
		cfg.Policy = schedsim.PT
	default:
		cfg.Policy = schedsim.History
	}
	return cfg
}
