package synth

import "time"

// Pattern is a tenant's true utilisation pattern.
type Pattern string

const (
	Periodic      Pattern = "periodic"
	Constant      Pattern = "constant"
	Unpredictable Pattern = "unpredictable"
)

// Profile describes a datacenter to generate.
type Profile struct {
	Name    string
	Seed    uint64
	Tenants int
	Start   time.Time
	Days    int // length of the utilisation series
	// ReimageDays is how long a reimage history to generate (default Days).
	ReimageDays int
	// Tenant shares of each pattern (the rest are unpredictable).
	PeriodicShare, ConstantShare float64
	// Mean servers per tenant of a periodic tenant and of the others.
	PeriodicServers, OtherServers float64
	// Noise scales the random variation of every pattern (1 = default).
	Noise float64
}

// DefaultProfile is a datacenter with the paper's proportions.
func DefaultProfile(seed uint64, tenants int) Profile {
	return Profile{
		Name: "dc-default", Seed: seed, Tenants: tenants,
		Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Days: 35,
		PeriodicShare: 0.15, ConstantShare: 0.55,
		PeriodicServers: 24, OtherServers: 6.5, Noise: 1,
	}
}

// Profiles returns ten datacenter profiles that differ in pattern mix and
// variation, like the paper's DC-0..DC-9.
func Profiles(seed uint64, tenants int) []Profile {
	out := make([]Profile, 10)
	for i := range out {
		p := DefaultProfile(seed+uint64(i), tenants)
		p.Name = "dc-" + string(rune('0'+i))
		p.PeriodicShare = 0.08 + 0.02*float64(i)  // 8% .. 26% of tenants
		p.ConstantShare = 0.62 - 0.025*float64(i) // 62% .. 39.5%
		p.Noise = 0.7 + 0.08*float64(i)           // calmer .. noisier
		out[i] = p
	}
	return out
}
