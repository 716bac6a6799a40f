package partition

import (
	"testing"
	"time"
)

func TestCutoffFollowsTheMeanOfTheLastFive(t *testing.T) {
	s := New(Config{Window: 5, Threshold: 0.1, Grow: 2, Shrink: 2, MinPartition: 2, MaxPartition: 10, InitialCutoff: 100 * time.Second, InitialSize: 4})
	for i := 0; i < 4; i++ {
		if s.Observe(50 * time.Second) {
			t.Fatal("moved before five durations")
		}
	}
	if !s.Observe(50*time.Second) || s.Cutoff != 50*time.Second || s.Size != 6 {
		t.Fatalf("after five short jobs: cutoff %s size %d, want 50s and a partition grown to 6", s.Cutoff, s.Size)
	}
	if s.Observe(54*time.Second) || s.Cutoff != 50*time.Second {
		t.Fatalf("a 0.8%% move changed the cutoff to %s", s.Cutoff)
	}
	for i := 0; i < 5; i++ {
		s.Observe(200 * time.Second)
	}
	if s.Cutoff <= 50*time.Second || s.Size >= 6 {
		t.Fatalf("longer jobs: cutoff %s size %d, want a higher cutoff and a smaller partition", s.Cutoff, s.Size)
	}
	for i := 0; i < 50; i++ {
		s.Observe(time.Hour * time.Duration(i+1))
	}
	if s.Size != 2 {
		t.Fatalf("partition %d below its lower bound 2", s.Size)
	}
	if !s.Short(s.Cutoff) || s.Short(s.Cutoff+time.Second) {
		t.Fatal("Short does not split at the cutoff")
	}
}

func TestRestoreContinuesWhereTheStateWas(t *testing.T) {
	cfg := Default(20)
	s := New(cfg)
	for _, d := range []time.Duration{10, 20, 30, 40} {
		s.Observe(d * time.Second)
	}
	r := Restore(cfg, s.Cutoff, s.Size, s.Recent())
	// the fifth duration moves both the same way
	if s.Observe(50*time.Second) != r.Observe(50*time.Second) || s.Cutoff != r.Cutoff || s.Size != r.Size {
		t.Fatalf("original %v/%d, restored %v/%d", s.Cutoff, s.Size, r.Cutoff, r.Size)
	}
	if got := Restore(cfg, time.Minute, 99, nil).Size; got != cfg.MaxPartition {
		t.Fatalf("size %d not clamped to %d", got, cfg.MaxPartition)
	}
}
