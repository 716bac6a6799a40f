package storagesim

import (
	"fmt"
	"testing"

	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/sim/schedsim"
	"github.com/harvest-platform/harvest/storage/nodes"
)

func TestFailedAccessesRiseWithUtilisationAndGridDoesBetter(t *testing.T) {
	p := synth.DefaultProfile(31, 200)
	p.Days = 9
	dc := synth.Generate(p)
	points, err := Availability(dc, AccessConfig{Seed: 2, Blocks: 5000, Accesses: 40000, Utilisations: []float64{30, 50, 70},
		Scaling: Linear, HistoryDays: 2}, []Policy{Stock, Grid}, []int{3, 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]float64{}
	someLone, someNot := false, false
	for _, pt := range points {
		someLone = someLone || pt.FailedOnLoneSlot > 0
		someNot = someNot || pt.FailedOnLoneSlot < pt.Failed
		at[fmt.Sprintf("%s%d@%.0f", pt.Policy, pt.Replicas, pt.Utilisation)] = pt.FailedPct
		t.Logf("%-5s R=%d at %.0f%% (%.1f%% of servers busy): %.4f%% of reads found every replica busy",
			pt.Policy, pt.Replicas, pt.Utilisation, pt.BusyPct, pt.FailedPct)
	}
	if at["stock3@70"] <= at["stock3@30"] {
		t.Errorf("stock: failed reads did not rise with utilisation: %.4f at 30%%, %.4f at 70%%", at["stock3@30"], at["stock3@70"])
	}
	if at["grid3@50"] >= at["stock3@50"] {
		t.Errorf("at 50%%, grid fails %.4f%% of reads, stock %.4f%%", at["grid3@50"], at["stock3@50"])
	}
	if !someLone || !someNot {
		t.Errorf("failed reads on a lone busy slot in some point %v, fewer than all failed reads in some point %v: want both", someLone, someNot)
	}
	if at["grid4@70"] > at["grid3@70"] {
		t.Errorf("R=4 fails more than R=3: %.4f > %.4f", at["grid4@70"], at["grid3@70"])
	}
}

func TestLoneBusySlotIsBusyBetweenCalmSlots(t *testing.T) {
	busy := []bool{true, false, true, true, false, true, false, true}
	want := []bool{true, false, false, false, false, true, false, true}
	for s := range busy {
		if got := loneBusySlot(busy, s); got != want[s] {
			t.Errorf("slot %d of %v: lone %v, want %v", s, busy, got, want[s])
		}
	}
}

func TestAvailabilityNeedsHistoryAndAReadWindow(t *testing.T) {
	p := synth.DefaultProfile(31, 10)
	p.Days = 2
	dc := synth.Generate(p)
	for _, days := range []int{0, 2} {
		if _, err := Availability(dc, AccessConfig{Blocks: 1, Accesses: 1, Utilisations: []float64{30}, HistoryDays: days},
			[]Policy{Stock}, []int{3}, nil); err == nil {
			t.Errorf("%d history days of a 2-day series: no error", days)
		}
	}
}

func TestDefaultBusyThresholdIsTheReservesEdge(t *testing.T) {
	if got := DefaultBusyThreshold(); got != 67 {
		t.Errorf("busy threshold %v, want 67 (100%% less the driver's 33%% CPU reserve)", got)
	}
}

func TestScaleForReachesTheTarget(t *testing.T) {
	p := synth.DefaultProfile(32, 30)
	p.Days = 2
	dc := synth.Generate(p)
	for _, how := range []Scaling{Linear, Root} {
		k := scaleFor(dc, 55, how, 0)
		sum, n := 0.0, 0.0
		for _, tn := range dc.Tenants {
			for _, v := range tn.Series.Values {
				sum += float64(len(tn.Nodes)) * schedsim.Scale(how, k, v)
				n += float64(len(tn.Nodes))
			}
		}
		if got := sum / n; got < 54.5 || got > 55.5 {
			t.Errorf("%s: mean %.2f after scaling by %.3f, want 55", how, got, k)
		}
	}
}

// Availability scales each tenant's unscaled peak rather than taking the
// peak of its scaled history: the two must agree for every scaling.
func TestPeakOfScaledHistoryIsTheScaledPeak(t *testing.T) {
	p := synth.DefaultProfile(33, 20)
	p.Days = 2
	for _, tn := range synth.Generate(p).Tenants {
		for _, how := range []Scaling{Linear, Root} {
			for _, k := range []float64{0.5, 1, 1.7, 3} {
				scaled := make([]float64, len(tn.Series.Values))
				for i, v := range tn.Series.Values {
					scaled[i] = schedsim.Scale(how, k, v)
				}
				if got, want := schedsim.Scale(how, k, nodes.PeakCPU(tn.Series.Values)), nodes.PeakCPU(scaled); got != want {
					t.Fatalf("%s %s x%v: scaled peak %v, peak of the scaled series %v", tn.ID, how, k, got, want)
				}
			}
		}
	}
}

// TestHourCandidatesFailFewerReads: steering each pick among 3 tenants of
// its cell by their busy hours fails fewer reads at 50% than Algorithm 2's
// random pick on the same datacenter, blocks and reads.
func TestHourCandidatesFailFewerReads(t *testing.T) {
	p := synth.DefaultProfile(31, 400)
	p.Days = 9
	dc := synth.Generate(p)
	failed := map[int]int{}
	for _, k := range []int{0, 3} {
		points, err := Availability(dc, AccessConfig{Seed: 2, Blocks: 5000, Accesses: 100000, Utilisations: []float64{50},
			Scaling: Linear, HistoryDays: 2, Steering: Steering{HourCandidates: k}}, []Policy{Grid}, []int{3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		failed[k] = points[0].Failed
		t.Logf("hour candidates %d: %d of %d reads found every replica busy; most loaded server %.2fx the mean",
			k, points[0].Failed, points[0].Accesses, points[0].MostLoaded)
	}
	if failed[0] == 0 || failed[3] >= failed[0] {
		t.Fatalf("failed reads: %d with the random pick, %d with 3 candidates: want some, then fewer", failed[0], failed[3])
	}
}
