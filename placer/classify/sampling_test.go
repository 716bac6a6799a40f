package classify

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/csvfmt"
	"github.com/harvest-platform/harvest/history/synth"
)

// exportCSV writes a datacenter's tenants as a monitoring system would
// export them every step: each sample the mean of the 2-minute slots it
// spans (a 5-minute sample spans two and a half).
func exportCSV(dc synth.Datacenter, step time.Duration) string {
	var b strings.Builder
	b.WriteString("tenant,timestamp,cpu_percent\n")
	slot := history.Slot.Seconds()
	for _, t := range dc.Tenants {
		v := t.Series.Values
		for at := 0.0; at+step.Seconds() <= float64(len(v))*slot; at += step.Seconds() {
			var sum, w float64
			for k := int(at / slot); float64(k)*slot < at+step.Seconds(); k++ {
				lo, hi := math.Max(at, float64(k)*slot), math.Min(at+step.Seconds(), float64(k+1)*slot)
				sum += v[k] * (hi - lo)
				w += hi - lo
			}
			fmt.Fprintf(&b, "%s,%s,%.2f\n", t.ID, t.Series.Start.Add(time.Duration(at)*time.Second).Format(time.RFC3339), sum/w)
		}
	}
	return b.String()
}

func classesOf(t *testing.T, csv string) map[string]string {
	t.Helper()
	series, rep, err := csvfmt.ParseLong(strings.NewReader(csv), csvfmt.LongOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []Input
	for id, s := range series {
		inputs = append(inputs, Input{Tenant: id.String(), Series: s})
	}
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].Tenant < inputs[j].Tenant })
	table := Classify(inputs, Default())
	out := map[string]string{}
	for _, r := range table.Tenants {
		out[r.Tenant] = string(r.Pattern) + " " + r.Reason
	}
	t.Logf("%d rows, %d slots filled", rep.Rows, rep.Filled)
	return out
}

// A month exported every 5 minutes (the interval of many monitoring
// systems) classifies as its 2-minute equivalent: every tenant gets the
// same pattern, none is refused for too little history.
func TestFiveMinuteHistoryClassifiesAsTwoMinute(t *testing.T) {
	p := synth.Profiles(7, 40)[4]
	p.Days = 30
	dc := synth.Generate(p)
	two, five := classesOf(t, exportCSV(dc, 2*time.Minute)), classesOf(t, exportCSV(dc, 5*time.Minute))
	same := 0
	for tenant, want := range two {
		if five[tenant] == want {
			same++
		} else {
			t.Errorf("%s: %q from 2-minute samples, %q from 5-minute ones", tenant, want, five[tenant])
		}
		if strings.Contains(five[tenant], "too little history") {
			t.Errorf("%s refused: %s", tenant, five[tenant])
		}
	}
	if len(two) != 40 || same != len(two) {
		t.Fatalf("%d of %d tenants classified alike", same, len(two))
	}
}
