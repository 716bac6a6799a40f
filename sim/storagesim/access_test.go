package storagesim

import (
	"testing"

	"github.com/harvest-platform/harvest/history/synth"
)

func TestFailedAccessesRiseWithUtilisationAndGridDoesBetter(t *testing.T) {
	p := synth.DefaultProfile(31, 200)
	p.Days = 7
	dc := synth.Generate(p)
	points, err := Availability(dc, AccessConfig{Seed: 2, Blocks: 5000, Accesses: 40000, Utilisations: []float64{30, 50, 70},
		BusyThreshold: 67, Scaling: Linear}, []Policy{Stock, Grid}, []int{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]float64{}
	for _, pt := range points {
		key := string(pt.Policy) + map[int]string{3: "3", 4: "4"}[pt.Replicas] + "@" + map[float64]string{30: "30", 50: "50", 70: "70"}[pt.Utilisation]
		at[key] = pt.FailedShare()
		t.Logf("%-5s R=%d at %.0f%%: %.4f%% of reads found every replica busy", pt.Policy, pt.Replicas, pt.Utilisation, 100*pt.FailedShare())
	}
	if at["stock3@70"] <= at["stock3@30"] {
		t.Errorf("stock: failed reads did not rise with utilisation: %.4f at 30%%, %.4f at 70%%", at["stock3@30"], at["stock3@70"])
	}
	if at["grid3@70"] > at["stock3@70"] {
		t.Errorf("at 70%%, grid fails %.4f of reads, stock %.4f", at["grid3@70"], at["stock3@70"])
	}
	if at["grid4@70"] > at["grid3@70"] {
		t.Errorf("R=4 fails more than R=3: %.4f > %.4f", at["grid4@70"], at["grid3@70"])
	}
}

func TestScaleForReachesTheTarget(t *testing.T) {
	p := synth.DefaultProfile(32, 30)
	p.Days = 2
	dc := synth.Generate(p)
	for _, how := range []Scaling{Linear, Root} {
		k := scaleFor(dc, 55, how)
		sum, n := 0.0, 0.0
		for _, tn := range dc.Tenants {
			for _, v := range tn.Series.Values {
				sum += float64(len(tn.Nodes)) * scale(v, k, how)
				n += float64(len(tn.Nodes))
			}
		}
		if got := sum / n; got < 54.9 || got > 55.1 {
			t.Errorf("%s: mean %.2f after scaling by %.3f, want 55", how, got, k)
		}
	}
}
