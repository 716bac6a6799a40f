package hybridsim

import (
	"math"
	"testing"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

func TestSyntheticMixAndLoad(t *testing.T) {
	s := Synthetic{Nodes: 200, Jobs: 20000, Load: 0.8}
	jobs, err := s.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	short := 0
	var work float64
	for _, j := range jobs {
		switch {
		case j.Tasks() == 10 && j.MeanTask() == 50:
			short++
		case j.Tasks() == 40 && j.MeanTask() == 10000:
		default:
			t.Fatalf("job %+v: want 10 tasks of 50 s or 40 of 10000 s", j)
		}
		work += j.Work()
	}
	if share := float64(short) / float64(len(jobs)); math.Abs(share-0.9) > 0.01 {
		t.Errorf("short share %.3f, want 0.9", share)
	}
	if load := work / (200 * jobs[len(jobs)-1].Arrival); math.Abs(load-0.8) > 0.05 {
		t.Errorf("offered load %.3f, want about 0.8", load)
	}
	again, _ := s.Generate(1)
	if again[999].Arrival != jobs[999].Arrival {
		t.Error("same seed, different arrivals")
	}
	if _, err := (Synthetic{Nodes: 10, Jobs: 5}).Generate(1); err == nil {
		t.Error("zero load accepted")
	}
}

func TestFoldKeepsTaskSeconds(t *testing.T) {
	if got := Fold([]float64{30, 30, 30, 30, 30}, 2); len(got) != 2 || got[0] != 75 || got[1] != 75 {
		t.Errorf("fold 5x30 s into 2: %v, want 2 tasks of 75 s", got)
	}
	if got := Fold([]float64{1, 2}, 2); len(got) != 2 || got[1] != 2 {
		t.Errorf("narrow stage changed: %v", got)
	}
}

func TestFromTrace(t *testing.T) {
	trace := []schedsim.TraceJob{{Stages: [][]float64{{30}}}, {Stages: [][]float64{{30, 30, 30, 30}, {30}}}}
	jobs, err := FromTrace(trace, 10, 2, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Arrival != 0 || jobs[1].Arrival <= 0 || len(jobs[1].Stages[0]) != 2 || jobs[1].Stages[0][0] != 60 ||
		jobs[1].Work() != 150 || jobs[1].MeanTask() != 50 {
		t.Errorf("%+v: want the 4-task stage folded into 2 of 60 s", jobs)
	}
	if _, err := FromTrace(nil, 10, 2, 0.5, 1); err == nil {
		t.Error("empty trace accepted")
	}
}
