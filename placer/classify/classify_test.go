package classify

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
)

var start = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

func constantSeries(level float64, days int, seed uint64) history.Series {
	rng := rand.New(rand.NewPCG(seed, 1))
	v := make([]float64, days*history.SlotsPerDay)
	for i := range v {
		v[i] = level + rng.NormFloat64()
	}
	return history.Series{Start: start, Values: v}
}

func TestExtractRefusesTooLittleOrGappyHistory(t *testing.T) {
	_, err := Extract(constantSeries(20, 3, 1), Default())
	if !errors.Is(err, ErrTooLittleHistory) || !strings.Contains(err.Error(), "72h0m0s of history, need 168h0m0s") {
		t.Fatalf("3 days: %v", err)
	}
	s := constantSeries(20, 10, 1)
	for i := 0; i < len(s.Values)/2; i++ {
		s.Values[i*2] = math.NaN()
	}
	for i := 0; i < len(s.Values)/4; i++ {
		s.Values[i] = math.NaN()
	}
	if _, err := Extract(s, Default()); !errors.Is(err, ErrTooLittleHistory) || !strings.Contains(err.Error(), "has samples, need 60%") {
		t.Fatalf("gappy: %v", err)
	}
}

func TestExtractFillsGapsAndFindsDailyPeriod(t *testing.T) {
	v := make([]float64, 30*history.SlotsPerDay)
	for i := range v {
		h := float64(i) * history.Slot.Hours()
		v[i] = 40 + 25*math.Sin(2*math.Pi*h/24)
		if i%7 == 0 {
			v[i] = math.NaN() // one slot in seven missing
		}
	}
	f, err := Extract(history.Series{Start: start, Values: v}, Default())
	if err != nil {
		t.Fatal(err)
	}
	if f.Period != 24*time.Hour || f.Strength < 0.9 || f.Pattern(Default()) != Periodic {
		t.Fatalf("features %+v", f)
	}
	if math.Abs(f.DailyAmp-25) > 1 || math.Abs(f.Mean-40) > 0.5 || f.Peak < 60 {
		t.Fatalf("amplitude %.2f mean %.2f peak %.2f", f.DailyAmp, f.Mean, f.Peak)
	}
}

func TestClassesFollowTheData(t *testing.T) {
	var inputs []Input
	for i := 0; i < 6; i++ { // two tight groups of constant tenants, 10% and 60%
		level := 10.0
		if i%2 == 1 {
			level = 60
		}
		inputs = append(inputs, Input{Tenant: "env/t" + string(rune('a'+i)), Nodes: []string{"n" + string(rune('a'+i))}, Series: constantSeries(level, 8, uint64(i))})
	}
	inputs = append(inputs, Input{Tenant: "env/young", Series: constantSeries(10, 2, 9)})
	table := Classify(inputs, Default())
	if len(table.Classes) != 2 {
		t.Fatalf("%d classes, want 2: %+v", len(table.Classes), table.Classes)
	}
	low, high := table.Classes[0], table.Classes[1]
	if low.Name != "constant-1" || high.Name != "constant-2" || math.Abs(low.Average-10) > 1 || math.Abs(high.Average-60) > 1 {
		t.Fatalf("classes %+v / %+v", low, high)
	}
	if len(low.Tenants) != 3 || len(high.Nodes) != 3 {
		t.Fatalf("membership %v / %v", low.Tenants, high.Nodes)
	}
	young := table.Tenants[len(table.Tenants)-1]
	if young.Tenant != "env/young" || young.Class != "" || !strings.Contains(young.Reason, "too little history") {
		t.Fatalf("young tenant %+v", young)
	}
	if again := Classify(inputs, Default()); !reflect.DeepEqual(again, table) {
		t.Fatal("same input and seed gave a different table")
	}
}

func TestHeadroomPerJobType(t *testing.T) {
	c := Class{Average: 30, Peak: 70}
	cases := []struct {
		typ     JobType
		current float64
		want    float64
	}{
		{Short, 50, 0.5}, {Medium, 20, 0.7}, {Medium, 40, 0.6}, {Long, 20, 0.3}, {Long, 90, 0.1}, {Long, 120, 0},
	}
	for _, tc := range cases {
		if got := Headroom(tc.typ, c, tc.current); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s at %.0f%%: headroom %.2f, want %.2f", tc.typ, tc.current, got, tc.want)
		}
	}
}

func TestSmoothLength(t *testing.T) {
	for n, want := range map[int]int{21600: 21600, 20998: 20736, 7: 6, 1: 1} {
		if got := smoothLength(n); got != want {
			t.Errorf("smoothLength(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestServerRoomIsWhatTheDriverAdmitsAtTheTypesLevel(t *testing.T) {
	c := Class{Average: 40, Peak: 70}
	s := Server{Cores: 12, Reserve: 4, Primary: 3}
	cases := []struct {
		typ  JobType
		want float64
	}{
		{Long, 0},   // 70% of 12 = 8.4 -> 9 cores planned; 12 - 9 - 4 < 0
		{Medium, 3}, // 40% of 12 = 4.8 -> 5; 12 - 5 - 4
		{Short, 5},  // now: 3 cores; 12 - 3 - 4
	}
	for _, tc := range cases {
		if got := ServerRoom(tc.typ, c, s); got != tc.want {
			t.Errorf("%s: room %g, want %g", tc.typ, got, tc.want)
		}
	}
	s.Allocated = 2 // running harvested work counts; a queue does not reach here
	if got := ServerRoom(Short, c, s); got != 3 {
		t.Errorf("short with 2 cores allocated: room %g, want 3", got)
	}
	s.Primary = 10 // above the class's peak: the current use wins
	if got := ServerRoom(Long, c, s); got != 0 {
		t.Errorf("long above the peak: room %g, want 0", got)
	}
}

// The paper's headroom (L150-153) is a share of the whole server: a class
// that peaks at 30% leaves a long job 8.4 of a 12-core server's cores,
// whatever the reserve; what runs there now counts when it is above the
// level (a measured utilisation counts the harvested work too).
func TestPaperRoomIsTheHeadroomOfTheWholeServer(t *testing.T) {
	c := Class{Average: 20, Peak: 30}
	for _, s := range []Server{{Cores: 12, Reserve: 0, Primary: 1}, {Cores: 12, Reserve: 4, Primary: 1, Allocated: 2}} {
		if got := PaperRoom(Long, c, s); math.Abs(got-8.4) > 1e-9 {
			t.Errorf("%+v: long room %g, want 8.4", s, got)
		}
	}
	if got := PaperRoom(Long, c, Server{Cores: 12, Reserve: 4, Primary: 1, Allocated: 5}); got != 6 {
		t.Errorf("with 6 of 12 cores busy now: %g, want 6", got)
	}
	if got := ServerRoom(Long, c, Server{Cores: 12, Reserve: 4, Primary: 1}); got != 4 {
		t.Errorf("the driver's room for the same: %g, want 12 - ceil(3.6) - 4 = 4", got)
	}
	if got := PaperRoom(Short, c, Server{Cores: 12, Primary: 6}); got != 6 {
		t.Errorf("short at 50%% now: %g, want 6", got)
	}
}
