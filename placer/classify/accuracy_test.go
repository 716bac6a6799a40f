package classify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/harvest-platform/harvest/history/synth"
)

// confusion counts true pattern -> classified pattern.
type confusion map[synth.Pattern]map[Pattern]int

func (c confusion) accuracy() float64 {
	right, all := 0, 0
	for truth, row := range c {
		for got, n := range row {
			all += n
			if string(truth) == string(got) {
				right += n
			}
		}
	}
	return float64(right) / float64(all)
}

func (c confusion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %9s %9s %14s %6s\n", "true \\ got", "periodic", "constant", "unpredictable", "none")
	for _, truth := range []synth.Pattern{synth.Periodic, synth.Constant, synth.Unpredictable} {
		row := c[truth]
		fmt.Fprintf(&b, "%-14s %9d %9d %14d %6d\n", truth, row[Periodic], row[Constant], row[Unpredictable], row[""])
	}
	return b.String()
}

// TestPatternAccuracyOnSyntheticDatacenters classifies the ten synthetic
// datacenter profiles (known labels) and requires >= 95% pattern accuracy.
func TestPatternAccuracyOnSyntheticDatacenters(t *testing.T) {
	tenants := 60
	if testing.Short() {
		tenants = 20
	}
	total := confusion{}
	for _, p := range synth.Profiles(11, tenants) {
		dc := synth.Generate(p)
		inputs := make([]Input, len(dc.Tenants))
		for i, tn := range dc.Tenants {
			inputs[i] = Input{Tenant: tn.ID.String(), Nodes: tn.Nodes, Series: tn.Series}
		}
		table := Classify(inputs, Default())
		got := map[string]Pattern{}
		for _, r := range table.Tenants {
			got[r.Tenant] = r.Pattern
		}
		for _, tn := range dc.Tenants {
			if total[tn.Pattern] == nil {
				total[tn.Pattern] = map[Pattern]int{}
			}
			total[tn.Pattern][got[tn.ID.String()]]++
		}
	}
	t.Logf("pattern confusion over 10 profiles x %d tenants:\n%s", tenants, total)
	if acc := total.accuracy(); acc < 0.95 {
		t.Fatalf("pattern accuracy %.1f%%, want >= 95%%\n%s", 100*acc, total)
	}
}
