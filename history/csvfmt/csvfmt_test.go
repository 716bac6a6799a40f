package csvfmt

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
)

var start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func TestParseLongAveragesIntoSlotsAndRoundTrips(t *testing.T) {
	in := "tenant,timestamp,cpu_percent\n" +
		"ads/indexer,2026-11-01T00:00:10Z,10\n" +
		"ads/indexer,2026-11-01T00:01:50Z,30\n" + // same slot: mean 20
		"ads/indexer,1793491440,50\n" + // unix seconds, 2 slots later
		"ads/indexer,2026-11-01T00:14:00Z,70\n" + // 5 slots later: a gap longer than the usual spacing
		"search/frontend,2026-11-01T00:00:00Z,99.5\n"
	got, rep, err := ParseLong(strings.NewReader(in), LongOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ads := got[history.TenantID{Environment: "ads", Function: "indexer"}]
	// 00:01:50 covers 00:02-00:04 (its usual spacing reaches past it); 00:04:00 reaches 00:06:10 at most
	want := []float64{20, 30, 50, 50, math.NaN(), math.NaN(), math.NaN(), 70}
	if len(ads.Values) != len(want) {
		t.Fatalf("ads series has %d slots, want %d", len(ads.Values), len(want))
	}
	for k, w := range want {
		if v := ads.Values[k]; v != w && !(math.IsNaN(v) && math.IsNaN(w)) {
			t.Fatalf("ads slot %d is %v, want %v (series %v)", k, v, w, ads.Values)
		}
	}
	if rep.Rows != 5 || rep.Filled != 2 || rep.Bad != 0 {
		t.Fatalf("report %+v", rep)
	}
	var buf bytes.Buffer
	if err := WriteLong(&buf, got); err != nil {
		t.Fatal(err)
	}
	again, _, err := ParseLong(&buf, LongOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 2 || again[history.TenantID{Environment: "ads", Function: "indexer"}].Observed() != 5 {
		t.Fatalf("round trip lost data: %v", again)
	}
}

func TestParseLongBadInputSaysWhatAndWhere(t *testing.T) {
	header := "tenant,timestamp,cpu_percent\n"
	cases := map[string]struct{ in, want string }{
		"no header":       {"", "empty input"},
		"wrong header":    {"tenant,time,cpu\n", `header column 2 is "time"`},
		"short row":       {header + "a/b,2026-11-01T00:00:00Z\n", "line 2: 2 fields, want 3"},
		"bad timestamp":   {header + "a/b,yesterday,5\n", `line 2: timestamp "yesterday"`},
		"NaN":             {header + "a/b,2026-11-01T00:00:00Z,NaN\n", "line 2: cpu_percent is NaN"},
		"negative":        {header + "a/b,2026-11-01T00:00:00Z,-3\n", "line 2: cpu_percent -3 is negative"},
		"above 110":       {header + "a/b,2026-11-01T00:00:00Z,110.1\n", "line 2: cpu_percent 110.1 is above 100"},
		"span":            {header + "a/b,1,5\na/b,2026-11-01T00:00:00Z,5\n", "samples span 20758 days"},
		"not a number":    {header + "a/b,2026-11-01T00:00:00Z,high\n", `cpu_percent "high" is not a number`},
		"bad tenant":      {header + "ab,2026-11-01T00:00:00Z,5\n", "want environment/function"},
		"hostile tenant":  {header + "../etc,2026-11-01T00:00:00Z,5\n", "environment \"..\""},
		"bad quote later": {header + "a/b,2026-11-01T00:00:00Z,5\n\"a/b,x\n", "line 3"},
	}
	for name, tc := range cases {
		_, _, err := ParseLong(strings.NewReader(tc.in), LongOptions{Strict: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to contain %q", name, err, tc.want)
		}
	}
}

func TestResampleFiveMinutesToTwoByInterpolation(t *testing.T) {
	s := Resample([]float64{0, 10, math.NaN(), 30}, start, 5*time.Minute)
	// slots at 0,2,4,...,14 minutes: positions 0,.4,.8,1.2,1.6,2.0,2.4,2.8 rows... up to 15 min
	want := []float64{0, 4, 8, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	if len(s.Values) != 8 {
		t.Fatalf("%d slots, want 8: %v", len(s.Values), s.Values)
	}
	for i, w := range want {
		g := s.Values[i]
		if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(g-w) > 1e-9) {
			t.Fatalf("slot %d = %v, want %v (all %v)", i, g, w, s.Values)
		}
	}
}

func TestParseAzureRealFile(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "azure-v1", "periodic_avg_78.csv.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("shared data not beside the project: %v", err)
	}
	defer f.Close()
	vms, err := ParseAzure(f, start)
	if err != nil {
		t.Fatal(err)
	}
	if len(vms) != 78 {
		t.Fatalf("%d VMs, want 78", len(vms))
	}
	periods := map[int]int{}
	for _, vm := range vms {
		periods[vm.PeriodHours]++
		// 8400 rows of 5 minutes = 29 days and 23:55, at 2-minute slots
		if n := len(vm.Series.Values); n != (8400-1)*5/2+1 {
			t.Fatalf("%s: %d slots", vm.Tenant, n)
		}
	}
	if periods[24] == 0 || periods[8] == 0 || periods[1] == 0 {
		t.Fatalf("period labels not read: %v", periods)
	}
	// VM 83972 appears twice (labelled 1 h and 24 h): both columns are kept.
	if vms[61].Tenant.Function != "vm-83972" || vms[62].Tenant.Function != "vm-83972-col64" {
		t.Fatalf("duplicate VM columns named %s and %s", vms[61].Tenant, vms[62].Tenant)
	}
}

func TestParseAzureBadInput(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"no columns":    {`""` + "\n", "names no VM column"},
		"ragged row":    {`"","7","8"` + "\n1,1\n", "line 2: 2 fields, want 3"},
		"value above":   {`"","7"` + "\n1,111\n2,3\n", "line 2: column 2 (azure-v1/vm-7): cpu_percent 111 is above 100"},
		"one row":       {`"","7"` + "\n1,5\n", "fewer than two rows"},
		"bad period":    {`"","7 x"` + "\n1,5\n2,5\n", `period "x"`},
		"hostile vm id": {`"","../../x"` + "\n1,5\n2,5\n", "must be 1-63"},
	}
	for name, tc := range cases {
		_, err := ParseAzure(strings.NewReader(tc.in), start)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	// gaps: NA cells are holes, not errors
	vms, err := ParseAzure(strings.NewReader(`"","7"`+"\n1,NA\n2,5\n"), start)
	if err != nil || !math.IsNaN(vms[0].Series.Values[0]) {
		t.Fatalf("NA not a gap: %v %v", err, vms)
	}
}

func TestReimagesRoundTripAndGzip(t *testing.T) {
	in := "tenant,node,timestamp\nads/indexer,n1,2026-11-02T00:00:00Z\nads/indexer,n2,1762041600\n"
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(in))
	w.Close()
	got, err := ParseReimages(&gz)
	if err != nil {
		t.Fatal(err)
	}
	if ev := got[history.TenantID{Environment: "ads", Function: "indexer"}]; len(ev) != 2 || ev[1].Node != "n2" {
		t.Fatalf("events = %+v", got)
	}
	_, err = ParseReimages(strings.NewReader("tenant,node,timestamp\nads/indexer,,2026-11-02T00:00:00Z\n"))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("empty node: %v", err)
	}
}

// A real export: one row a little over 100 and two bad rows. Without
// Strict the rest is read, the clamped row counted and the bad ones
// reported with their lines; with Strict the first bad row stops it.
func TestParseLongReadsARealExportAndReportsWhatItSkipped(t *testing.T) {
	in := "tenant,timestamp,cpu_percent\n" +
		"a/b,2026-11-01T00:00:00Z,40\n" +
		"a/b,2026-11-01T00:02:00Z,103.2\n" +
		"a/b,yesterday,5\n" +
		"a/b,2026-11-01T00:04:00Z\n" +
		"a/b,2026-11-01T00:06:00Z,42\n"
	got, rep, err := ParseLong(strings.NewReader(in), LongOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := got[history.TenantID{Environment: "a", Function: "b"}]
	if rep.Rows != 3 || rep.Clamped != 1 || rep.Bad != 2 || len(rep.Errors) != 2 || rep.Errors[0].Line != 4 || rep.Errors[1].Line != 5 {
		t.Fatalf("report %+v", rep)
	}
	if len(s.Values) != 4 || s.Values[1] != 100 || s.Values[2] != 100 || s.Values[3] != 42 {
		t.Fatalf("series %v: want 40, 100 (clamped), 100 (filled over the bad rows' slot), 42", s.Values)
	}
	if !strings.Contains(rep.String(), "line 4: timestamp \"yesterday\"") {
		t.Fatalf("report reads %q", rep.String())
	}
	if _, _, err := ParseLong(strings.NewReader(in), LongOptions{Strict: true}); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("strict: %v", err)
	}
}

// Five-minute samples fill every 2-minute slot they cover.
func TestParseLongFillsFromFiveMinuteSamples(t *testing.T) {
	var b strings.Builder
	b.WriteString("tenant,timestamp,cpu_percent\n")
	for k := 0; k < 12; k++ { // one hour
		fmt.Fprintf(&b, "a/b,%s,%d\n", start.Add(time.Duration(k)*5*time.Minute).Format(time.RFC3339), 10+k)
	}
	got, rep, err := ParseLong(strings.NewReader(b.String()), LongOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := got[history.TenantID{Environment: "a", Function: "b"}]
	if s.Observed() != len(s.Values) || len(s.Values) != 28 || rep.Filled != 28-12 {
		t.Fatalf("%d of %d slots observed, %d filled: want every slot of 55 minutes", s.Observed(), len(s.Values), rep.Filled)
	}
}

// TestParseLifetimesReadsTheDiskLogAndRefusesWhatCannotBe: a disk log of
// two servers (one disk failed and was replaced) reads back as written;
// broken rows are refused with their line.
func TestParseLifetimesReadsTheDiskLogAndRefusesWhatCannotBe(t *testing.T) {
	const header = "tenant,node,rack,disk,first_seen,last_seen,failed\n"
	disks, err := ParseLifetimes(strings.NewReader(header +
		"search/fe,n1,r1,d1,2026-01-01T00:00:00Z,2026-03-01T00:00:00Z,2026-03-01T12:00:00Z\n" +
		"search/fe,n1,r1,d2,2026-03-02T00:00:00Z,2026-12-31T00:00:00Z,\n" +
		"maps/tiles,n2,,d3,1767225600,1798675200,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(disks) != 3 || disks[0].Failed != time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) || !disks[1].Failed.IsZero() ||
		disks[2].Rack != "" || disks[2].FirstSeen != time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) || disks[2].Tenant.String() != "maps/tiles" {
		t.Fatalf("read %+v", disks)
	}
	for row, want := range map[string]string{
		"search/fe,n1,r1,d1,2026-01-01T00:00:00Z,2026-03-01T00:00:00Z,\nsearch/fe,n2,r1,d1,2026-01-01T00:00:00Z,2026-03-01T00:00:00Z,\n":  "line 3: disk \"d1\" already listed on line 2",
		"search/fe,n1,r1,d1,2026-03-01T00:00:00Z,2026-01-01T00:00:00Z,\n":                                                                 "before it was first seen",
		"search/fe,n1,r1,d1,2026-01-01T00:00:00Z,2026-03-01T00:00:00Z,2026-05-01T00:00:00Z\n":                                             "outside its life",
		"search/fe,n1,r1,d1,2026-01-01T00:00:00Z,2026-03-01T00:00:00Z,\nmaps/tiles,n1,r1,d2,2026-01-01T00:00:00Z,2026-03-01T00:00:00Z,\n": "listed under tenant search/fe too",
		"search/fe,n1,r1,,2026-01-01T00:00:00Z,2026-03-01T00:00:00Z,\n":                                                                   "empty disk",
		"search/fe,n1,r1,d1,yesterday,2026-03-01T00:00:00Z,\n":                                                                            "first_seen",
		"": "lists no disk",
	} {
		if _, err := ParseLifetimes(strings.NewReader(header + row)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", row, err, want)
		}
	}
}
