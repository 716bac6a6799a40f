package guard

import (
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func task(id string, ageSeconds int, cpu, mem float64) Task {
	return Task{ID: id, Started: t0.Add(-time.Duration(ageSeconds) * time.Second), Alloc: Resources{cpu, mem}}
}

func ids(ts []Task) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return strings.Join(out, ",")
}

func TestPrimaryIsRoundedUpToWholeCoresAndMiB(t *testing.T) {
	if got := RoundUp(Resources{1.01, 100.2}); got != (Resources{2, 101}) {
		t.Fatalf("RoundUp = %+v", got)
	}
	if got := RoundUp(Resources{0, 0}); math.Signbit(got.MemoryMiB) || got.CPU != 0 {
		t.Fatalf("RoundUp(0) = %+v (a negative zero prints as -0 MiB)", got)
	}
	if got := RoundUp(Resources{2, 512}); got != (Resources{2, 512}) {
		t.Fatalf("whole values moved: %+v", got)
	}
	s := State{Capacity: Resources{8, 16384}, Primary: Resources{1.01, 1000.5}, Tasks: []Task{task("a", 1, 2, 1024)}}
	if got := s.Free(); got != (Resources{4, 16384 - 1001 - 1024}) {
		t.Fatalf("Free = %+v", got)
	}
}

func TestEvictionsAreYoungestFirstAndMinimal(t *testing.T) {
	s := State{
		Capacity: Resources{8, 16384},
		Reserve:  Resources{2, 1024},
		Tasks: []Task{
			task("old", 300, 1, 512), task("young", 10, 1, 512), task("middle", 100, 1, 512),
		},
	}
	s.Primary = Resources{2.5, 4000} // rounded 3: free = 8-3-3 = 2: exactly the reserve
	if d := Evictions(s); len(d.Evict) != 0 {
		t.Fatalf("evicted %s with the reserve intact", ids(d.Evict))
	}
	s.Primary = Resources{3.2, 4000} // rounded 4: free 1, short by 1 core: one task is enough
	d := Evictions(s)
	if ids(d.Evict) != "young" || d.Shortfall != (Resources{1, 0}) {
		t.Fatalf("evicted %s (shortfall %+v), want young only", ids(d.Evict), d.Shortfall)
	}
	if !strings.Contains(d.Reason(), "primary tenant needs 4 cores") {
		t.Fatalf("reason %q", d.Reason())
	}
	s.Primary = Resources{4.5, 4000} // rounded 5: short by 2: the two youngest
	if d := Evictions(s); ids(d.Evict) != "young,middle" {
		t.Fatalf("evicted %s, want young,middle", ids(d.Evict))
	}
	s.Primary = Resources{1, 15000} // memory: free 16384-15000-1536 < 1024: short by 1176 MiB -> three tasks
	if d := Evictions(s); ids(d.Evict) != "young,middle,old" {
		t.Fatalf("memory shortfall evicted %s", ids(d.Evict))
	}
	s.Primary = Resources{9, 0} // beyond capacity: everything goes
	if d := Evictions(s); len(d.Evict) != 3 {
		t.Fatalf("primary above capacity evicted %d of 3", len(d.Evict))
	}
}

func TestEqualStartTimesEvictDeterministically(t *testing.T) {
	s := State{Capacity: Resources{4, 4096}, Reserve: Resources{1, 0}, Primary: Resources{2, 0},
		Tasks: []Task{task("b", 5, 1, 0), task("a", 5, 1, 0)}}
	if d := Evictions(s); ids(d.Evict) != "a" {
		t.Fatalf("tie broken as %s", ids(d.Evict))
	}
}

func TestAdmissionUsesPeakAndMargin(t *testing.T) {
	h := Hysteresis{AdmitWindow: 30 * time.Second, AdmitMargin: Resources{1, 256}}
	s := State{Capacity: Resources{8, 16384}, Reserve: Resources{2, 1024}, Primary: Resources{1, 1000}}
	if err := Admit(s, Resources{}, h, Resources{3, 1024}); err != nil {
		t.Fatalf("8-1-3=4 cores free >= 2+1 refused: %v", err)
	}
	err := Admit(s, Resources{}, h, Resources{4.5, 1024})
	if err == nil || !strings.Contains(err.Error(), "would leave 2.50 cores") {
		t.Fatalf("8-1-4.5=2.5 < 3 admitted or unclear: %v", err)
	}
	// the primary is low now but spiked to 4 cores within the window
	tr := NewTracker(h.AdmitWindow)
	tr.Observe(t0.Add(-20*time.Second), Resources{4, 1000})
	tr.Observe(t0, Resources{1, 1000})
	if err := Admit(s, tr.Peak(), h, Resources{2, 512}); err == nil {
		t.Fatal("admitted right after a spike: 8-4-2=2 < 3")
	}
	tr.Observe(t0.Add(15*time.Second), Resources{1, 1000}) // the spike leaves the window
	if p := tr.Peak(); p.CPU != 1 {
		t.Fatalf("peak %+v after the window", p)
	}
	if err := Admit(s, tr.Peak(), h, Resources{2, 512}); err != nil {
		t.Fatalf("still refused after the window: %v", err)
	}
}

// Room is exactly the largest ask Admit takes: an ask of the room is
// admitted, one a little larger is refused, and a broken reserve leaves no
// room rather than a negative one.
func TestRoomIsTheLargestAdmittedAsk(t *testing.T) {
	h := Hysteresis{AdmitWindow: 30 * time.Second, AdmitMargin: Resources{1, 256}}
	s := State{Capacity: Resources{8, 16384}, Reserve: Resources{2, 1024}, Primary: Resources{1.2, 1000},
		Tasks: []Task{{ID: "a", Alloc: Resources{0.5, 512}}}}
	peak := Resources{2.5, 900} // rounded up: 3 cores
	room := Room(s, peak, h)
	if want := (Resources{8 - 3 - 0.5 - 2 - 1, 16384 - 1000 - 512 - 1024 - 256}); room != want {
		t.Fatalf("room %+v, want %+v", room, want)
	}
	if err := Admit(s, peak, h, room); err != nil {
		t.Fatalf("an ask of the room refused: %v", err)
	}
	if err := Admit(s, peak, h, Resources{room.CPU + 0.01, 1}); err == nil {
		t.Fatal("an ask above the room's CPU admitted")
	}
	if err := Admit(s, peak, h, Resources{0.1, room.MemoryMiB + 1}); err == nil {
		t.Fatal("an ask above the room's memory admitted")
	}
	s.Primary = Resources{7, 1000}
	if r := Room(s, Resources{}, h); r.CPU != 0 || r.MemoryMiB != room.MemoryMiB {
		t.Fatalf("room with the reserve broken %+v, want 0 cores and %v MiB", r, room.MemoryMiB)
	}
	if err := Admit(s, Resources{}, h, Resources{}); err == nil {
		t.Fatal("an empty ask admitted while the reserve is broken")
	}
}

func TestNoisyPrimaryDoesNotStorm(t *testing.T) {
	// A primary oscillating across a core boundary every second: evictions
	// happen, but hysteresis keeps the freed room from being re-admitted
	// while the noise lasts, so each task is evicted at most once.
	h := DefaultHysteresis()
	tr := NewTracker(h.AdmitWindow)
	s := State{Capacity: Resources{8, 16384}, Reserve: Resources{2, 0}}
	running := []Task{task("t1", 100, 1, 0), task("t2", 50, 1, 0), task("t3", 10, 1, 0)}
	evictions, admissions := 0, 0
	for i := 0; i < 120; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		s.Primary = Resources{CPU: 2.9 + 0.2*float64(i%2)} // 2.9 / 3.1: rounded 3 / 4
		tr.Observe(now, s.Primary)
		s.Tasks = running
		d := Evictions(s)
		evictions += len(d.Evict)
		for _, v := range d.Evict {
			for j, r := range running {
				if r.ID == v.ID {
					running = append(running[:j], running[j+1:]...)
					break
				}
			}
		}
		s.Tasks = running
		if Admit(s, tr.Peak(), h, Resources{1, 0}) == nil {
			admissions++
			running = append(running, Task{ID: "new", Started: now, Alloc: Resources{1, 0}})
		}
	}
	if evictions > 1 || admissions > 0 {
		t.Fatalf("noise caused %d evictions and %d admissions", evictions, admissions)
	}
}

func TestParseReserve(t *testing.T) {
	capacity := Resources{12, 32768}
	r, err := ParseReserve("33%", "31%", capacity)
	if err != nil || r.CPU != 3.96 || r.MemoryMiB != 32768*0.31 {
		t.Fatalf("percent reserve %+v %v", r, err)
	}
	if r, err := ParseReserve("2", "4096", capacity); err != nil || r != (Resources{2, 4096}) {
		t.Fatalf("absolute reserve %+v %v", r, err)
	}
	for _, bad := range [][2]string{{"120%", "1"}, {"-1", "1"}, {"x", "1"}, {"1", "40000"}} {
		if _, err := ParseReserve(bad[0], bad[1], capacity); err == nil {
			t.Errorf("reserve %v accepted", bad)
		}
	}
}
