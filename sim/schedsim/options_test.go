package schedsim

import (
	"math"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/placer/jobtype"
)

// YARN's heartbeat fill: the server at the cursor takes requests until it
// is full, then the next server in heartbeat order with room, wrapping.
func TestHeartbeatFillFillsTheFirstNodeBeforeTheNext(t *testing.T) {
	h := newHeartbeatOrder(4, 1)
	room := map[int]int{}
	for i := range 4 {
		room[i] = 3
		h.open.set(h.pos[i], 1)
	}
	var got []int
	for range 12 {
		i := h.next()
		got = append(got, i)
		if room[i]--; room[i] == 0 {
			h.open.set(h.pos[i], 0)
		}
	}
	for k := 0; k < 12; k += 3 {
		if got[k] != got[k+1] || got[k] != got[k+2] || got[k] != h.order[k/3] {
			t.Fatalf("picks %v: want each server three times in a row, in heartbeat order %v", got, h.order)
		}
	}
	if i := h.next(); i != -1 {
		t.Fatalf("every server full: picked %d", i)
	}
	room[h.order[1]] = 1 // a server frees room: the cursor wraps to it
	h.open.set(h.pos[h.order[1]], 1)
	if i := h.next(); i != h.order[1] {
		t.Fatalf("after the wrap: %d, want %d", i, h.order[1])
	}
}

// Under PT, one job of 8 one-core tasks on four idle 12-core servers with a
// 4-core reserve: heartbeat fill puts all 8 on one server (8 cores of room);
// the proportional rule spreads them.
func TestUnlabelledRequestsFollowTheConfiguredPlacement(t *testing.T) {
	for _, c := range []struct {
		p    Placement
		used func(int) bool // of the servers holding the job's containers
	}{{Heartbeat, func(n int) bool { return n == 1 }}, {Proportional, func(n int) bool { return n > 1 }}} {
		cfg := Config{Policy: PT, Span: time.Hour, Cores: 12, Reserve: 4, Arrivals: []float64{10}, Unlabelled: c.p, Seed: 3,
			Mix: Mix{Classes: []JobClass{{Name: "one", Weight: 1, Stages: [2]int{1, 1}, Tasks: [2]int{8, 8}, TaskSeconds: 600}}}}
		for _, id := range []string{"a/p", "b/p", "c/p", "d/p"} {
			cfg.Tenants = append(cfg.Tenants, Tenant{ID: id, Servers: 1, Series: flat(30, 0, 0, 0)})
		}
		s, _, err := newSim(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.slot(0)
		s.admit(newJob(1, 0, cfg.Mix.draw(s.rng)))
		used := 0
		for _, sv := range s.servers {
			if len(sv.held) > 0 {
				used++
			}
		}
		if !c.used(used) {
			t.Errorf("%s: the job's 8 tasks went to %d servers", c.p, used)
		}
	}
}

// The oracle typing changes the type Algorithm 1 is given and nothing else:
// with thresholds that call every job medium, TypeByClass types the mix's
// "long" jobs long.
func TestTypeByClassChangesOnlyTheTyping(t *testing.T) {
	base := Config{Policy: History, Span: time.Hour, Cores: 12, Reserve: 4, Arrivals: []float64{10, 20, 30}, Seed: 5,
		Thresholds: jobtype.Thresholds{Short: time.Second, Long: 100 * time.Hour}, // every job medium
		Mix:        Mix{Classes: []JobClass{{Name: "long", Weight: 1, Stages: [2]int{1, 1}, Tasks: [2]int{2, 2}, TaskSeconds: 60}}},
		Tenants:    []Tenant{{ID: "a/p", Servers: 2, Series: flat(30, 10, 10, 0)}, {ID: "b/p", Servers: 2, Series: flat(30, 20, 20, 0)}}}
	plain, err := Run(base)
	if err != nil {
		t.Fatal(err)
	}
	oracle := base
	oracle.TypeByClass = true
	typed, err := Run(oracle)
	if err != nil {
		t.Fatal(err)
	}
	count := func(r Result, prefix string) int {
		n := 0
		for k, v := range r.ByJobClass["long"].Fits {
			if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
				n += v
			}
		}
		return n
	}
	if count(plain, "medium/") != 3 || count(typed, "long/") != 3 || count(typed, "medium/") != 0 {
		t.Fatalf("fits without the oracle %v, with it %v: want 3 medium, then 3 long", plain.ByJobClass["long"].Fits, typed.ByJobClass["long"].Fits)
	}
	if plain.Jobs != typed.Jobs || plain.Servers != typed.Servers {
		t.Fatalf("the oracle changed more than the typing: %d/%d jobs, %d/%d servers", plain.Jobs, typed.Jobs, plain.Servers, typed.Servers)
	}
}

// A tenant whose history starts late (NaN before) has no servers until then:
// a job that only it could take waits for it to join.
func TestATenantThatJoinsLateTakesNothingBefore(t *testing.T) {
	late := flat(30, 0, 0, 0)
	for k := 0; k < 15; k++ {
		late.Values[k] = math.NaN()
	}
	cfg := Config{Policy: PT, Span: time.Hour, Cores: 4, Reserve: 1, Arrivals: []float64{10},
		Mix:     Mix{Classes: []JobClass{{Name: "one", Weight: 1, Stages: [2]int{1, 1}, Tasks: [2]int{1, 1}, TaskSeconds: 60}}},
		Tenants: []Tenant{{ID: "full/p", Servers: 1, Series: flat(30, 100, 100, 0)}, {ID: "late/p", Servers: 1, Series: late}}}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := 15*120.0 - 10 + 60 // it joins at slot 15
	if r.Jobs != 1 || math.Abs(r.MeanJobSeconds-want) > 1e-6 {
		t.Fatalf("job time %v (%d jobs), want %v: the late tenant's server took the task before it joined", r.MeanJobSeconds, r.Jobs, want)
	}
}
