// Package replay owns the replay of primary tenants' CPU traces on the local
// cluster: a tenant history in the long CSV format (csvfmt.ParseLong's,
// optionally gzipped) played against wall time, faster than real time when
// asked, as the CPU a node's primary tenant uses (Cores) and the counter of
// CPU seconds it has used since the replay began (CPUSeconds, what the
// cluster's metrics exporter serves in place of a real cgroup's). It reads
// nothing but the trace file.
package replay

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
)

// slotSeconds is a trace slot's length in trace seconds.
var slotSeconds = history.Slot.Seconds()

// Trace is a tenant history played against wall time: wall time Began is
// trace time Start, and one wall second is Speedup trace seconds. A
// tenant's CPU is a step function of trace time, one step per 2-minute slot
// of the history; before its first sample and after its last it stays at
// the nearest sample, and a slot with no sample (a gap the format leaves)
// keeps the value of the sample before it.
type Trace struct {
	Start   time.Time // trace time at Began
	Began   time.Time // wall time at which the replay began
	Speedup float64   // trace seconds per wall second; 0 means 1
	// Report says what reading the file skipped, clamped or filled.
	Report csvfmt.LongReport

	tenants map[string]*tenantTrace
}

// tenantTrace is one tenant's steps and their running integral.
type tenantTrace struct {
	start  time.Time // the first slot's start
	values []float64 // cpu_percent per slot, gaps filled
	// cum[k] is the integral of the steps over the first k slots, in
	// percent × trace seconds; cum[len(values)] is the whole.
	cum []float64
}

// Load reads the trace file at path (long CSV, optionally gzipped); the
// caller sets Start, Began and Speedup.
func Load(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	return t, nil
}

// Read reads a trace in the long CSV format (optionally gzipped) from r.
// Bad rows are skipped and counted in Report, as harvestctl's import does.
func Read(r io.Reader) (*Trace, error) {
	series, rep, err := csvfmt.ParseLong(r, csvfmt.LongOptions{})
	if err != nil {
		return nil, err
	}
	t := &Trace{Report: rep, tenants: make(map[string]*tenantTrace, len(series))}
	for id, s := range series {
		if tt := newTenantTrace(s); tt != nil {
			t.tenants[id.String()] = tt
		}
	}
	return t, nil
}

func newTenantTrace(s history.Series) *tenantTrace {
	if s.Observed() == 0 {
		return nil
	}
	tt := &tenantTrace{start: s.Start, values: make([]float64, len(s.Values)), cum: make([]float64, len(s.Values)+1)}
	last := math.NaN()
	for k, v := range s.Values {
		if math.IsNaN(v) {
			v = last
		}
		tt.values[k], last = v, v
		tt.cum[k+1] = tt.cum[k] + v*slotSeconds
	}
	return tt
}

// Tenants lists the trace's tenants (environment/function), in name order.
func (t *Trace) Tenants() []string {
	out := make([]string, 0, len(t.tenants))
	for id := range t.tenants {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Check returns an error naming every one of tenants the trace has no
// samples of (Cores and CPUSeconds read them as 0).
func (t *Trace) Check(tenants ...string) error {
	var missing []string
	for _, id := range tenants {
		if t.tenants[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the trace has no samples of tenant %s (it has %d: %s)",
			strings.Join(missing, ", "), len(t.tenants), abbreviate(t.Tenants(), 5))
	}
	return nil
}

func abbreviate(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", ... and %d more", len(names)-n)
}

// Cores is tenant's CPU at wall time wall, in cores of a node of nodeCores:
// the cpu_percent of the slot holding the trace time wall stands for.
func (t *Trace) Cores(tenant string, wall time.Time, nodeCores float64) float64 {
	tt := t.tenants[tenant]
	if tt == nil {
		return 0
	}
	return tt.values[tt.slot(t.traceSeconds(tt, wall))] / 100 * nodeCores
}

// CPUSeconds is the CPU seconds tenant has used on a node of nodeCores from
// Began to wall: the exact integral of Cores over wall time (0 at or before
// Began). It never decreases as wall grows, so it serves as a counter.
func (t *Trace) CPUSeconds(tenant string, wall time.Time, nodeCores float64) float64 {
	tt := t.tenants[tenant]
	if tt == nil || !wall.After(t.Began) {
		return 0
	}
	// Cores(w) = v(τ(w))/100 × nodeCores with dτ = Speedup dw
	return (tt.integral(t.traceSeconds(tt, wall)) - tt.integral(t.traceSeconds(tt, t.Began))) / 100 * nodeCores / t.speedup()
}

func (t *Trace) speedup() float64 {
	if t.Speedup <= 0 {
		return 1
	}
	return t.Speedup
}

// traceSeconds is the trace time wall stands for, in seconds after tt's
// first slot began.
func (t *Trace) traceSeconds(tt *tenantTrace, wall time.Time) float64 {
	return t.Start.Sub(tt.start).Seconds() + wall.Sub(t.Began).Seconds()*t.speedup()
}

// integral is the integral of the steps from the first slot's start to x
// seconds after it (negative before it), the first and last samples
// extended beyond the trace.
func (tt *tenantTrace) integral(x float64) float64 {
	n := len(tt.values)
	switch end := float64(n) * slotSeconds; {
	case x <= 0:
		return tt.values[0] * x
	case x >= end:
		return tt.cum[n] + tt.values[n-1]*(x-end)
	}
	k := tt.slot(x)
	return tt.cum[k] + tt.values[k]*(x-float64(k)*slotSeconds)
}

// slot is the index of the slot holding x seconds after the first slot's
// start, clamped to the trace. x/slotSeconds may round across a boundary:
// the index is corrected so that the slot starts at or before x and ends
// after it, which keeps integral monotone.
func (tt *tenantTrace) slot(x float64) int {
	if x <= 0 {
		return 0
	}
	k := int(x / slotSeconds)
	if float64(k)*slotSeconds > x {
		k--
	} else if float64(k+1)*slotSeconds <= x {
		k++
	}
	return max(0, min(k, len(tt.values)-1))
}
