package replay

import (
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testCSV: tenant a/b at 50% in slot 0, 100% in slot 1, 0% in slot 2, no
// sample in slots 3 and 4 (a gap: they keep 0%), 20% in slot 5 (its last);
// tenant c/d at a flat 25%.
const testCSV = `tenant,timestamp,cpu_percent
a/b,2026-01-01T00:00:00Z,50
a/b,2026-01-01T00:02:00Z,100
a/b,2026-01-01T00:04:00Z,0
a/b,2026-01-01T00:10:00Z,20
c/d,2026-01-01T00:00:00Z,25
`

func readTest(t *testing.T) *Trace {
	t.Helper()
	tr, err := Read(strings.NewReader(testCSV))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestCPUSecondsIsTheIntegralOfTheSteps checks CPUSeconds against a hand
// computation: trace time 00:01 at wall W, one wall second a trace minute,
// a 4-core node.
func TestCPUSecondsIsTheIntegralOfTheSteps(t *testing.T) {
	tr := readTest(t)
	w := time.Date(2030, 5, 5, 12, 0, 0, 0, time.UTC)
	tr.Start, tr.Began, tr.Speedup = t0.Add(time.Minute), w, 60
	for _, c := range []struct {
		after       time.Duration // wall time after Began
		cores, want float64
	}{
		{-time.Second, 2, 0},
		{0, 2, 0},
		// trace 00:01-00:02 at 50% of 4 cores: 2 cores for one wall second
		{time.Second, 4, 2},
		{500 * time.Millisecond, 2, 1},
		// 00:02-00:04 at 4 cores: two wall seconds
		{3 * time.Second, 0, 2 + 8},
		// 00:04-00:10: 0%, then the gap keeps 0%
		{8 * time.Second, 0, 10},
		// 00:10-00:12 at 20% = 0.8 cores
		{9 * time.Second, 0.8, 10},
		{10 * time.Second, 0.8, 10 + 0.8},
		{11 * time.Second, 0.8, 10 + 0.8*2},
		// after the last slot (00:10-00:12) it stays at 20%: to 00:21
		{20 * time.Second, 0.8, 10 + 0.8*11},
	} {
		if got := tr.CPUSeconds("a/b", w.Add(c.after), 4); !near(got, c.want) {
			t.Errorf("CPUSeconds at +%s = %v, want %v", c.after, got, c.want)
		}
		if got := tr.Cores("a/b", w.Add(c.after), 4); !near(got, c.cores) {
			t.Errorf("Cores at +%s = %v, want %v", c.after, got, c.cores)
		}
	}
}

func TestBeforeTheFirstSampleTheFirstStands(t *testing.T) {
	tr := readTest(t)
	w := time.Date(2030, 5, 5, 12, 0, 0, 0, time.UTC)
	tr.Start, tr.Began, tr.Speedup = t0.Add(-time.Hour), w, 0 // 0: real time
	if got := tr.Cores("a/b", w, 2); got != 1 {
		t.Errorf("Cores before the first sample = %v, want 1 (50%% of 2)", got)
	}
	if got := tr.CPUSeconds("a/b", w.Add(30*time.Second), 2); !near(got, 30) {
		t.Errorf("CPUSeconds = %v, want 30", got)
	}
	if got := tr.CPUSeconds("c/d", w.Add(time.Hour+3*time.Minute), 8); !near(got, 2*3780) {
		t.Errorf("flat tenant: CPUSeconds = %v, want %v", got, 2*3780)
	}
}

// TestCoresStepAtTheSlotBoundary: the slot holding a time is the one that
// starts at or before it.
func TestCoresStepAtTheSlotBoundary(t *testing.T) {
	tr := readTest(t)
	w := time.Date(2030, 5, 5, 12, 0, 0, 0, time.UTC)
	tr.Start, tr.Began, tr.Speedup = t0, w, 1
	for _, c := range []struct {
		after time.Duration
		want  float64
	}{
		{0, 2},
		{2*time.Minute - time.Nanosecond, 2},
		{2 * time.Minute, 4},
		{4*time.Minute - time.Millisecond, 4},
		{4 * time.Minute, 0},
	} {
		if got := tr.Cores("a/b", w.Add(c.after), 4); got != c.want {
			t.Errorf("Cores at +%s = %v, want %v", c.after, got, c.want)
		}
	}
	// and the counter bends there: one core-second per ... second at 4 cores
	before := tr.CPUSeconds("a/b", w.Add(2*time.Minute), 4)
	if got := tr.CPUSeconds("a/b", w.Add(2*time.Minute+time.Second), 4) - before; !near(got, 4) {
		t.Errorf("the second after the boundary added %v, want 4", got)
	}
}

// TestCPUSecondsNeverDecreases walks wall time in uneven steps, across
// slot boundaries at a speedup that does not divide them.
func TestCPUSecondsNeverDecreases(t *testing.T) {
	tr := readTest(t)
	w := time.Date(2030, 5, 5, 12, 0, 0, 0, time.UTC)
	tr.Start, tr.Began, tr.Speedup = t0.Add(-7*time.Second), w, 37.3
	prev := 0.0
	step := time.Duration(0)
	for at := w.Add(-time.Second); at.Before(w.Add(40 * time.Second)); at = at.Add(step) {
		got := tr.CPUSeconds("a/b", at, 3)
		if got < prev {
			t.Fatalf("CPUSeconds went back at +%s: %v after %v", at.Sub(w), got, prev)
		}
		prev = got
		step = step%(7*time.Millisecond) + 997*time.Microsecond + time.Nanosecond
	}
	// the counter rises at the rate Cores says within a slot
	at := w.Add(5 * time.Second)
	if rate := (tr.CPUSeconds("a/b", at.Add(time.Millisecond), 3) - tr.CPUSeconds("a/b", at, 3)) / 1e-3; math.Abs(rate-tr.Cores("a/b", at, 3)) > 1e-6 {
		t.Errorf("rate %v, Cores %v", rate, tr.Cores("a/b", at, 3))
	}
}

func TestCheckNamesTheMissingTenants(t *testing.T) {
	tr := readTest(t)
	if err := tr.Check("a/b", "c/d"); err != nil {
		t.Fatal(err)
	}
	err := tr.Check("a/b", "x/y", "z/w")
	if err == nil || !strings.Contains(err.Error(), "x/y, z/w") {
		t.Fatalf("Check = %v, want the missing tenants named", err)
	}
	if got := tr.CPUSeconds("x/y", time.Now(), 4); got != 0 {
		t.Errorf("CPUSeconds of a missing tenant = %v", got)
	}
	if got := strings.Join(tr.Tenants(), " "); got != "a/b c/d" {
		t.Errorf("Tenants = %s", got)
	}
}

func TestLoadReadsAGzippedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.csv.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	if _, err := gz.Write([]byte(testCSV)); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Report.Rows != 5 || tr.Check("a/b", "c/d") != nil {
		t.Errorf("report %s, tenants %v", tr.Report, tr.Tenants())
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.csv")); err == nil {
		t.Error("a missing file loaded")
	}
}
