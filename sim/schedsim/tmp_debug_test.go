package schedsim

import (
	"fmt"
	"github.com/harvest-platform/harvest/placer/jobtype"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"
)

func TestDebugRun(t *testing.T) {
	servers, _ := strconv.Atoi(os.Getenv("SERVERS"))
	days, _ := strconv.Atoi(os.Getenv("DAYS"))
	if servers == 0 {
		t.Skip()
	}
	tenants := benchTenants(servers, days)
	tc, _ := strconv.Atoi(os.Getenv("TC"))
	var th jobtype.Thresholds
	if os.Getenv("DEFTH") != "" {
		th = jobtype.Default()
	}
	for _, f := range []float64{1, 2} {
		base := 0.0
		for _, p := range []Policy{PT, History} {
			r, err := Run(Config{Seed: 1, Policy: p, Tenants: tenants, HistoryDays: 8, Span: time.Duration(days) * 24 * time.Hour, Factor: f, NoHistoryRanking: os.Getenv("NOHR") != "", ClassConstraint: os.Getenv("CONS") != "", NoMargin: os.Getenv("NOMARGIN") != "", TaskCores: tc, Thresholds: th})
			if err != nil {
				t.Fatal(err)
			}
			var ks []string
			for k := range r.EvictedByPattern {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			cl := ""
			for _, k := range []string{"short", "medium", "long"} {
				c := r.ByJobClass[k]
				cl += fmt.Sprintf(" %s:%d/%.0f", k, c.Jobs, c.MeanJobSeconds)
			}
			if p == PT {
				base = r.MeanJobSeconds
			}
			fmt.Printf("%s x%.0f util %.3f mean %.0f (%.1f%%) unfin %d evicted %d wasted %.0f fits %v%s\n", p, f, r.Utilisation, r.MeanJobSeconds, 100*(base-r.MeanJobSeconds)/base, r.Unfinished, r.Evicted, r.WastedTaskSeconds, r.Fits, cl)
		}
	}
}

func TestDebugHazard(t *testing.T) {
	tenants := benchTenants(300, 3)
	for _, f := range []float64{1, 2} {
		cfg := Config{Seed: 1, Policy: History, Tenants: tenants, HistoryDays: 8, Span: 24 * time.Hour, Factor: f}
		cfg.defaults()
		s := &sim{cfg: cfg, byTenant: make([][]int, len(cfg.Tenants))}
		for ti, tn := range cfg.Tenants {
			for k := 0; k < tn.Servers; k++ {
				s.byTenant[ti] = append(s.byTenant[ti], len(s.servers))
				s.servers = append(s.servers, server{tenant: ti, class: -1})
			}
		}
		s.classifyTenants()
		for ci, c := range s.classes.table.Classes {
			var up, free float64
			n := 0
			for _, i := range s.classes.members[ci] {
				prev := -1.0
				for k := 8 * 720; k < 11*720; k++ {
					cur := float64(int(s.series(s.servers[i].tenant, k)/100*16 + 0.999999))
					if prev >= 0 && cur > prev {
						up += cur - prev
					}
					free += 14 - cur
					prev = cur
					n++
				}
			}
			fmt.Printf("x%.0f %-16s servers %3d avg %5.1f peak %5.1f  rise cores/server-day %6.1f  free cores %5.1f  rise per free core-day %.2f\n", f, c.Name, len(s.classes.members[ci]), c.Average, c.Peak, up/float64(len(s.classes.members[ci]))/3, free/float64(n), up/free*720)
		}
	}
}
