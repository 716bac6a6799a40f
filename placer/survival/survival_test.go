package survival

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func flat(slots int, at func(t int) float64) []float64 {
	v := make([]float64, slots)
	for i := range v {
		v[i] = at(i)
	}
	return v
}

var server = Server{Cores: 12, Reserve: 4}

func TestAConstantPrimaryKillsNothing(t *testing.T) {
	s := []Series{{Percent: flat(720, func(int) float64 { return 30 }), Weight: 3}}
	for _, p := range Curve(s, server, 2*time.Minute, []time.Duration{10 * time.Minute, 4 * time.Hour}, nil) {
		if p.Probability != 1 || p.Tasks == 0 {
			t.Errorf("%s: %+v, want every task to end", p.Length, p)
		}
	}
}

// A primary that takes one more core for one slot every hour kills the
// youngest of the four tasks each time. Ten-minute tasks: about one of the
// 24 an hour dies. Two-hour tasks: the three oldest run to their end while
// the fourth core's task dies every hour: 3 ended for 2 killed.
func TestARecurringRiseKillsLongTasksFirst(t *testing.T) {
	u := flat(10*720, func(i int) float64 { // ten days of 2-minute slots
		if i%30 == 29 {
			return 30 + 100.0/12 // one more core
		}
		return 30
	})
	lengths := []time.Duration{10 * time.Minute, 2 * time.Hour}
	ser := []Series{{Percent: u, Weight: 1}}
	short := float64(Curve(ser, server, 2*time.Minute, lengths, []float64{600})[0].Probability)
	long := float64(Curve(ser, server, 2*time.Minute, lengths, []float64{7200})[1].Probability)
	if math.Abs(short-23.0/24) > 0.01 {
		t.Errorf("10-minute tasks: survival %.3f, want about 23/24", short)
	}
	if math.Abs(long-0.6) > 0.01 {
		t.Errorf("2-hour tasks: survival %.3f, want about 3/5", long)
	}
}

func TestNoRoomDecidesNothing(t *testing.T) {
	s := []Series{{Percent: flat(100, func(int) float64 { return 95 }), Weight: 1}}
	p := Curve(s, server, 2*time.Minute, []time.Duration{10 * time.Minute}, nil)[0]
	if p.Probability.Known() || p.Tasks != 0 {
		t.Fatalf("%+v, want NaN from no task", p)
	}
}

func TestServersWeighTheClass(t *testing.T) {
	calm := Series{Percent: flat(720, func(int) float64 { return 20 }), Weight: 3}
	rough := Series{Percent: flat(720, func(i int) float64 { return 20 + 40*float64(i%2) }), Weight: 1}
	p := Curve([]Series{calm, rough}, server, 2*time.Minute, []time.Duration{10 * time.Minute}, nil)[0]
	// calm: all survive; rough: every task started in a quiet slot dies in the next
	if b, _ := json.Marshal(Point{Probability: Probability(math.NaN())}); !strings.Contains(string(b), `"probability":null`) {
		t.Errorf("an unknown probability marshals as %s", b)
	}
	if p.Probability <= 0.5 || p.Probability >= 1 {
		t.Fatalf("survival %.3f, want between the rough tenant's and the calm one's, nearer the calm", p.Probability)
	}
}

// Younger, shorter tasks shield an old one: under the same hourly rise a
// two-hour task survives more often among ten-minute tasks than among
// two-hour ones, since the rise kills whoever started last.
func TestShortTasksAroundALongOneShieldIt(t *testing.T) {
	u := flat(10*720, func(i int) float64 {
		if i%30 == 29 {
			return 30 + 100.0/12
		}
		return 30
	})
	ser := []Series{{Percent: u, Weight: 1}}
	lengths := []time.Duration{10 * time.Minute, 2 * time.Hour}
	alone := float64(Curve(ser, server, 2*time.Minute, lengths, []float64{7200})[1].Probability)
	mixed := Curve(ser, server, 2*time.Minute, lengths, []float64{600, 600, 600, 7200})[1]
	if mixed.Tasks == 0 || float64(mixed.Probability) <= alone+0.1 {
		t.Fatalf("2-hour tasks: %.3f among 10-minute ones (%d tasks), %.3f alone; want clearly more among short ones", mixed.Probability, mixed.Tasks, alone)
	}
	if Bucket(lengths, 40*time.Minute) != 1 || Bucket(lengths, 20*time.Minute) != 0 {
		t.Fatalf("buckets split at the geometric midpoint (about 35 minutes)")
	}
}

// The admission margin is hysteresis: with a 1-core margin the server
// starts only 3 tasks in the 4-core room, and the hourly rise that takes a
// core leaves room for exactly those 3, so none dies; counted as reserve,
// as before, the room would be 3 and the rise would kill one every hour.
func TestTheAdmissionMarginShieldsTasksFromARiseOfItsSize(t *testing.T) {
	u := flat(10*720, func(i int) float64 {
		if i%30 == 29 {
			return 30 + 100.0/12 // one more core
		}
		return 30
	})
	ser := []Series{{Percent: u, Weight: 1}}
	lengths := []time.Duration{2 * time.Hour}
	margin := Curve(ser, Server{Cores: 12, Reserve: 4, Margin: 1}, 2*time.Minute, lengths, []float64{7200})[0]
	asReserve := Curve(ser, Server{Cores: 12, Reserve: 5}, 2*time.Minute, lengths, []float64{7200})[0]
	if margin.Probability != 1 || margin.Tasks == 0 {
		t.Errorf("with a 1-core margin: %+v, want every task to end", margin)
	}
	if p := float64(asReserve.Probability); p > 0.7 || p < 0.5 {
		t.Errorf("with the margin counted as reserve: survival %.3f, want 0.5-0.7: the youngest of the 3 is killed every hour", p)
	}
}
