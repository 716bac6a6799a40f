package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/harvest-platform/harvest/history"
)

// Tenant is one generated primary tenant with its true pattern.
type Tenant struct {
	ID       history.TenantID
	Pattern  Pattern
	Nodes    []string
	Series   history.Series
	Reimages []history.Reimage
	// ReimageRate is the tenant's mean reimages per server per month.
	ReimageRate float64
}

// Datacenter is a generated set of tenants.
type Datacenter struct {
	Profile Profile
	Tenants []Tenant
}

var environments = []string{"search", "ads", "mail", "maps", "video", "store", "crawl", "test", "dev", "infra"}

// Generate builds the datacenter the profile describes. The same profile
// always gives the same datacenter.
func Generate(p Profile) Datacenter {
	if p.ReimageDays == 0 {
		p.ReimageDays = p.Days
	}
	if p.Noise == 0 {
		p.Noise = 1
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x9e3779b97f4a7c15))
	dc := Datacenter{Profile: p, Tenants: make([]Tenant, p.Tenants)}
	for i := range dc.Tenants {
		t := &dc.Tenants[i]
		u := rng.Float64()
		switch {
		case u < p.PeriodicShare:
			t.Pattern = Periodic
		case u < p.PeriodicShare+p.ConstantShare:
			t.Pattern = Constant
		default:
			t.Pattern = Unpredictable
		}
		env := environments[rng.IntN(len(environments))]
		t.ID = history.TenantID{Environment: env, Function: fmt.Sprintf("%s-%04d", t.Pattern[:4], i)}
		mean := p.OtherServers
		if t.Pattern == Periodic {
			mean = p.PeriodicServers
		}
		servers := 1 + int(rng.ExpFloat64()*(mean-1))
		for s := 0; s < servers; s++ {
			t.Nodes = append(t.Nodes, fmt.Sprintf("%s-%04d-n%03d", env, i, s))
		}
		// Each tenant draws from its own stream, so one tenant's series does
		// not depend on how much randomness another consumed.
		trng := rand.New(rand.NewPCG(p.Seed^uint64(i+1)*0xbf58476d1ce4e5b9, uint64(i)))
		t.Series = series(trng, t.Pattern, p.Start, p.Days, p.Noise)
		t.ReimageRate, t.Reimages = reimages(trng, t.Nodes, p.Start, p.ReimageDays)
	}
	return dc
}

// series draws one tenant's average-server utilisation.
func series(rng *rand.Rand, pat Pattern, start time.Time, days int, noise float64) history.Series {
	n := days * history.SlotsPerDay
	v := make([]float64, n)
	slotHours := history.Slot.Hours()
	switch pat {
	case Periodic:
		base := 10 + rng.Float64()*35
		amp := 8 + rng.Float64()*25
		period := []float64{24, 24, 24, 24, 12, 8}[rng.IntN(6)]
		phase := rng.Float64() * 2 * math.Pi
		weekend := 0.6 + rng.Float64()*0.4 // weekends run at 60-100% of the swing
		sd := (1.5 + rng.Float64()*2.5) * noise
		for i := range v {
			h := float64(i) * slotHours
			swing := amp * math.Sin(2*math.Pi*h/period+phase)
			if day := int(h/24) % 7; day >= 5 {
				swing *= weekend
			}
			v[i] = base + swing + rng.NormFloat64()*sd
		}
	case Constant:
		level := 3 + rng.Float64()*60
		sd := (0.5 + rng.Float64()*1.5) * noise
		drift := (rng.Float64() - 0.5) * 4 / float64(n) // up to ±2 points over the window
		for i := range v {
			v[i] = level + drift*float64(i) + rng.NormFloat64()*sd
		}
	default: // unpredictable: regimes of random level and length, bursts, AR(1) noise
		level := 5 + rng.Float64()*60
		ar, sd := 0.0, (3+rng.Float64()*4)*noise
		nextChange := 0
		for i := range v {
			if i >= nextChange {
				level = math.Max(2, math.Min(95, level+rng.NormFloat64()*25))
				nextChange = i + 1 + int(rng.ExpFloat64()*float64(history.SlotsPerDay)/3) // ~8 h regimes
			}
			ar = 0.8*ar + rng.NormFloat64()*sd
			burst := 0.0
			if rng.Float64() < 0.002 {
				burst = rng.Float64() * 40
			}
			v[i] = level + ar + burst
		}
	}
	for i := range v {
		v[i] = math.Max(0, math.Min(100, v[i]))
	}
	return history.Series{Start: start.UTC(), Values: v}
}

// PatternSeries draws one series of the given pattern, for tests and demos
// that need a tenant of a known pattern.
func PatternSeries(seed uint64, pat Pattern, start time.Time, days int) history.Series {
	return series(rand.New(rand.NewPCG(seed, 0x51)), pat, start, days, 1)
}
