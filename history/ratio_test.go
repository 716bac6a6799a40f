package history_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/kv"
)

// ratio encodes every day of the series in both formats, checks that
// format 3 gives back the slots format 2 held (to 0.01 point), and returns
// the bytes of each.
func ratio(t *testing.T, series []history.Series) (v2, v3, days int) {
	t.Helper()
	for _, s := range series {
		for _, d := range history.DaysOf(s) {
			b2, b3 := history.EncodeDay(d, 2), history.EncodeDay(d, 3)
			var r2, r3 history.Day
			if err := r2.UnmarshalBinary(b2); err != nil {
				t.Fatal(err)
			}
			if err := r3.UnmarshalBinary(b3); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < history.SlotsPerDay; i++ {
				a, b := r2.Mean(i), r3.Mean(i)
				if math.IsNaN(a) != math.IsNaN(b) || math.Abs(a-b) > 0.0051 {
					t.Fatalf("%s slot %d: format 2 %v, format 3 %v", d.Date, i, a, b)
				}
			}
			v2, v3, days = v2+len(b2), v3+len(b3), days+1
		}
	}
	return
}

// azureVMs reads the Azure V1 traces beside the project (skipping the test
// when they are not there).
func azureVMs(t *testing.T) []csvfmt.AzureVM {
	t.Helper()
	var out []csvfmt.AzureVM
	for _, name := range []string{"microsoft_avg_100.csv.gz", "periodic_avg_78.csv.gz"} {
		f, err := os.Open(filepath.Join("..", "..", "shared", "data", "azure-v1", name))
		if err != nil {
			t.Skipf("shared data not beside the project: %v", err)
		}
		r, err := csvfmt.Decompress(f)
		if err != nil {
			t.Fatal(err)
		}
		vms, err := csvfmt.ParseAzure(r, time.Date(2016, 11, 16, 0, 0, 0, 0, time.UTC))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, vms...)
	}
	return out
}

// TestFormat3IsDenser measures format 3 against format 2 on synthetic
// datacenters (three profiles) and on the Azure V1 traces, and requires it
// to be at most a third of the size.
func TestFormat3IsDenser(t *testing.T) {
	var syn []history.Series
	for _, p := range []synth.Profile{synth.DefaultProfile(1, 60), synth.Profiles(2, 60)[9], synth.Profiles(3, 60)[0]} {
		p.Days = 14
		for _, tn := range synth.Generate(p).Tenants {
			syn = append(syn, tn.Series)
		}
	}
	v2, v3, n := ratio(t, syn)
	t.Logf("synthetic: %d days, format 2 %d B/day, format 3 %d B/day, ratio %.1fx", n, v2/n, v3/n, float64(v2)/float64(v3))
	if 3*v3 > v2 {
		t.Errorf("format 3 is %d bytes, more than a third of format 2's %d", v3, v2)
	}

	var az []history.Series
	for _, vm := range azureVMs(t) {
		az = append(az, vm.Series)
	}
	v2, v3, n = ratio(t, az)
	t.Logf("azure-v1: %d days, format 2 %d B/day, format 3 %d B/day, ratio %.1fx", n, v2/n, v3/n, float64(v2)/float64(v3))
	if 3*v3 > v2 {
		t.Errorf("format 3 is %d bytes, more than a third of format 2's %d", v3, v2)
	}
}

func BenchmarkDecodeDay(b *testing.B) {
	p := synth.DefaultProfile(1, 3)
	p.Days = 2
	d := history.DaysOf(synth.Generate(p).Tenants[0].Series)[0]
	v := history.EncodeDay(d, 3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out history.Day
		if err := out.UnmarshalBinary(v); err != nil {
			b.Fatal(err)
		}
	}
}

// bundled imports series into bundles under the given format and returns
// the bytes Consul would hold.
func bundled(t *testing.T, format int, series map[history.TenantID]history.Series) int {
	t.Helper()
	ctx := context.Background()
	kv := kv.NewMem()
	s := history.NewStore(kv, "")
	if err := s.SetFormat(ctx, format); err != nil {
		t.Fatal(err)
	}
	if err := s.PutDays(ctx, series); err != nil {
		t.Fatal(err)
	}
	pairs, _ := kv.List(ctx, "harvest/days/")
	n := 0
	for _, pr := range pairs {
		n += len(pr.Value)
	}
	return n
}

// TestBundlesAreDenserStill: a sealed day of many tenants in one value
// compresses better than each alone (one set of tables for all), and
// format 4's bundles (slot means to 0.1 point) are smaller again; the
// figures per tenant day are what Consul holds for history older than two
// days.
func TestBundlesAreDenserStill(t *testing.T) {
	p := synth.DefaultProfile(4, 200)
	p.Days = 3
	series := map[history.TenantID]history.Series{}
	single := 0
	for _, tn := range synth.Generate(p).Tenants {
		series[tn.ID] = tn.Series
		for _, d := range history.DaysOf(tn.Series) {
			single += len(history.EncodeDay(d, 3))
		}
	}
	n := 3 * len(series)
	b3, b4 := bundled(t, 3, series), bundled(t, 4, series)
	t.Logf("synthetic, %d tenant days: %d B each alone, %d B each in format-3 bundles, %d B in format 4 (%.0f%%)",
		n, single/n, b3/n, b4/n, 100*float64(b4)/float64(b3))
	if b3 >= single || b4 >= b3 {
		t.Errorf("bundles hold %d bytes in format 3 and %d in format 4, the days alone %d", b3, b4, single)
	}

	az := map[history.TenantID]history.Series{}
	days := 0
	for k, vm := range azureVMs(t) {
		az[history.TenantID{Environment: "azure", Function: fmt.Sprintf("vm-%d", k)}] = vm.Series
		days += len(history.DaysOf(vm.Series))
	}
	b3, b4 = bundled(t, 3, az), bundled(t, 4, az)
	t.Logf("azure-v1, %d tenant days: %d B each in format-3 bundles, %d B in format 4 (%.0f%%)",
		days, b3/days, b4/days, 100*float64(b4)/float64(b3))
	if b4 >= b3 {
		t.Errorf("format-4 bundles hold %d bytes, format 3 %d", b4, b3)
	}
}
