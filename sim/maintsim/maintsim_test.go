package maintsim

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/placer/maintenance"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

var t0 = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

func minute(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }

// figure2 is the source's Figure 2 in one half of three hours, points on
// the hour: at 0 two jobs run (a for 30 min, b for 10 min at 10 units:
// 130 unit-min), at 1 h only b (70 min x 10 = 700), at 2 h two jobs that
// just began (c 10 min, d 5 min: 15). CL picks 1 h, AW 2 h.
func figure2(shift float64) []maintenance.Alloc {
	return []maintenance.Alloc{
		{Job: "a", Start: minute(shift - 30), End: minute(shift + 30), CPU: 1},
		{Job: "b", Start: minute(shift - 10), End: minute(shift + 100), CPU: 10},
		{Job: "c", Start: minute(shift + 110), End: minute(shift + 130), CPU: 1},
		{Job: "d", Start: minute(shift + 115), End: minute(shift + 130), CPU: 1},
	}
}

func TestFigure2CLAndAWPickDifferentMoments(t *testing.T) {
	allocs := figure2(0)
	aw, cl := Sweep(allocs, t0, minute(180), time.Hour)
	wantAW, wantCL := []float64{130 * 60, 700 * 60, 15 * 60}, []float64{2, 1, 2}
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Hour)
		if aw[i] != wantAW[i] || cl[i] != wantCL[i] || maintenance.AccumulatedWork(allocs, at) != wantAW[i] || maintenance.RunningJobs(allocs, at) != wantCL[i] {
			t.Fatalf("point %d: AW %v CL %v, want %v %v", i, aw[i], cl[i], wantAW[i], wantCL[i])
		}
	}
	argmin := func(v []float64) int {
		k := 0
		for i := range v {
			if v[i] < v[k] {
				k = i
			}
		}
		return k
	}
	if argmin(cl) != 1 || argmin(aw) != 2 {
		t.Fatalf("CL picks point %d, AW point %d; want T2 (1) and T3 (2)", argmin(cl), argmin(aw))
	}
}

// TestEvaluate profiles one Figure 2 and evaluates a second one 3 h later.
// Urgency 1: thresholds are the profile's minimum, AW 900 and CL 1; AW's
// one candidate forfeits 900, CL's (the 1 h point) 42000. Urgency 50: AW
// 7800 (two candidates: (7800+900)/2), CL 2 (all three: 50700/3).
func TestEvaluate(t *testing.T) {
	allocs := append(figure2(0), figure2(180)...)
	res, err := Evaluate(allocs, Config{Step: time.Hour, Urgencies: []int{1, 50}, From: t0, To: minute(360)})
	if err != nil {
		t.Fatal(err)
	}
	if res.ProfilePoints != 3 || res.EvalPoints != 3 || !res.Split.Equal(minute(180)) {
		t.Fatalf("%d profile and %d evaluation points, split at %s", res.ProfilePoints, res.EvalPoints, res.Split)
	}
	l := res.Levels[0]
	if l.AW != (Rule{900, 1, 900}) || l.CL != (Rule{1, 1, 42000}) || l.AWSaving == nil || math.Abs(*l.AWSaving-100*41100.0/42000) > 1e-9 {
		t.Fatalf("urgency 1: %+v", l)
	}
	l = res.Levels[1]
	if l.AW != (Rule{7800, 2, 4350}) || l.CL != (Rule{2, 3, 16900}) {
		t.Fatalf("urgency 50: %+v", l)
	}
	// the evaluation period repeats the profile: a perfect forecast changes nothing
	if l.PerfectAW != l.AW || l.PerfectCL != l.CL || *l.PerfectSaving != *l.AWSaving {
		t.Fatalf("perfect forecast %+v %+v, want the profile's", l.PerfectAW, l.PerfectCL)
	}
	// without From and To: the trace's first start (-30 min) to its last end
	if res, err := Evaluate(allocs, Config{Step: time.Minute, Urgencies: []int{5}}); err != nil || !res.From.Equal(minute(-30)) || !res.Split.Equal(minute(140)) {
		t.Fatalf("%+v %v: want -30 min to 310 min split at 140 min", res, err)
	}
	if _, err := Evaluate(allocs, Config{Step: time.Hour, Urgencies: []int{0}}); err == nil {
		t.Fatal("urgency 0 accepted")
	}
}

// TestPerfectForecast: the evaluation period works twice as hard as the
// profile, so AW's profiled P1 (900) is never met; with the evaluation's own
// P1 (1800) it is, once.
func TestPerfectForecast(t *testing.T) {
	allocs := figure2(0)
	for _, a := range figure2(180) {
		a.CPU *= 2
		allocs = append(allocs, a)
	}
	res, err := Evaluate(allocs, Config{Step: time.Hour, Urgencies: []int{1}, From: t0, To: minute(360)})
	if err != nil {
		t.Fatal(err)
	}
	l := res.Levels[0]
	if l.AW != (Rule{900, 0, 0}) || l.AWSaving != nil || l.CL != (Rule{1, 1, 84000}) {
		t.Fatalf("profiled: %+v", l)
	}
	if l.PerfectAW != (Rule{1800, 1, 1800}) || l.PerfectCL != (Rule{1, 1, 84000}) || l.PerfectSaving == nil ||
		math.Abs(*l.PerfectSaving-100*82200.0/84000) > 1e-9 {
		t.Fatalf("perfect forecast: %+v %+v", l.PerfectAW, l.PerfectCL)
	}
}

// TestSweepEqualsProfile on random allocations, some still running.
func TestSweepEqualsProfile(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var allocs []maintenance.Alloc
	for range 300 {
		a := maintenance.Alloc{Job: strconv.Itoa(rng.IntN(40)), Start: minute(rng.Float64() * 600), CPU: float64(1 + rng.IntN(50))}
		switch rng.IntN(10) {
		case 0: // still running
		case 1: // ended as it started
			a.End = a.Start
		default:
			a.End = a.Start.Add(time.Duration(rng.Float64() * float64(3*time.Hour)))
		}
		allocs = append(allocs, a)
	}
	from, to, step := minute(-7), minute(800), 90*time.Second
	aw, cl := Sweep(allocs, from, to, step)
	pAW := maintenance.Profile(allocs, maintenance.AccumulatedWork, from, to, step)
	pCL := maintenance.Profile(allocs, maintenance.RunningJobs, from, to, step)
	if len(aw) != len(pAW) || len(cl) != len(pCL) {
		t.Fatalf("%d/%d points, want %d", len(aw), len(cl), len(pAW))
	}
	for i := range aw {
		if math.Abs(aw[i]-pAW[i]) > 1e-9*math.Max(1, pAW[i]) || cl[i] != pCL[i] {
			t.Fatalf("point %d: sweep AW %v CL %v, profile %v %v", i, aw[i], cl[i], pAW[i], pCL[i])
		}
	}
}

// TestJobWorkCountsCompletedAllocations: a job's finished first stage is
// forfeited with its running second stage, until the job ends.
func TestJobWorkCountsCompletedAllocations(t *testing.T) {
	allocs := []maintenance.Alloc{
		{Job: "j", Start: minute(0), End: minute(10), CPU: 2},
		{Job: "j", Start: minute(20), End: minute(40), CPU: 1},
		{Job: "k", Start: minute(0), End: minute(5), CPU: 100}, // over by 15 min
	}
	for _, c := range []struct{ at, job, running float64 }{{15, 20, 0}, {30, 30, 10}, {40, 0, 0}} {
		if w := JobWork(allocs, minute(c.at)); w != c.job*60 {
			t.Errorf("at %v min: job work %v, want %v", c.at, w/60, c.job)
		}
		if w := maintenance.AccumulatedWork(allocs, minute(c.at)); w != c.running*60 {
			t.Errorf("at %v min: AW %v, want %v", c.at, w/60, c.running)
		}
	}
	// Evaluate costs by the forfeit asked for. From 0 to 61 min (z, of no
	// work, ends the trace) the evaluation is 30-60 min; at urgency 100 every
	// point meets CL's perfect-forecast threshold, so its mean forfeit is the
	// mean cost over the 31 points: j's job work is t unit-min for t in
	// 30-39 (20 done in its first stage, t-20 in its second) and 0 once it
	// ends at 40, its running work t-20.
	allocs = append(allocs, maintenance.Alloc{Job: "z", Start: minute(60), End: minute(61)})
	for _, c := range []struct {
		forfeit Forfeit
		sum     float64 // unit-min over the evaluation points
	}{{Job, 345}, {Running, 145}} {
		res, err := Evaluate(allocs, Config{Step: time.Minute, Urgencies: []int{100}, Forfeit: c.forfeit})
		if err != nil || res.Forfeit != c.forfeit || res.EvalPoints != 31 {
			t.Fatalf("%s: %+v %v", c.forfeit, res, err)
		}
		if r := res.Levels[0].PerfectCL; r.Candidates != 31 || math.Abs(r.MeanForfeit-c.sum*60/31) > 1e-9 {
			t.Errorf("%s: CL's perfect forecast %+v, want 31 points forfeiting %g unit-s on average", c.forfeit, r, c.sum*60/31)
		}
	}
}

func TestFromAlibaba(t *testing.T) {
	trace := []schedsim.AlibabaTask{{Create: -20, End: 40, Job: "9", Instances: 3, CPU: 50}}
	for work, want := range map[string]float64{"containers": 3, "cores": 1.5} {
		allocs, err := FromAlibaba(trace, t0, work)
		if err != nil || len(allocs) != 1 || allocs[0] != (maintenance.Alloc{Job: "9", Start: t0.Add(-20 * time.Second), End: t0.Add(40 * time.Second), CPU: want}) {
			t.Fatalf("%s: %+v %v", work, allocs, err)
		}
	}
	if _, err := FromAlibaba(trace, t0, "MHz"); err == nil {
		t.Fatal("unknown unit accepted")
	}
}
