package storagesim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/harvest-platform/harvest/history/synth"
)

// Scaling stretches a tenant's utilisation to sweep the datacenter's load,
// as the paper's simulator does: linear (saturating at 100%) or n-th root.
type Scaling string

const (
	Linear Scaling = "linear"
	Root   Scaling = "root"
)

func scale(u, k float64, how Scaling) float64 {
	if how == Root { // 100 * (u/100)^(1/k): lifts low values most
		return 100 * math.Pow(u/100, 1/k)
	}
	return math.Min(100, u*k)
}

// AccessConfig says how to measure availability.
type AccessConfig struct {
	Seed          uint64
	Blocks        int
	Accesses      int       // reads per utilisation level
	Utilisations  []float64 // target mean utilisations (percent)
	BusyThreshold float64   // a server is busy at or above this utilisation (percent)
	Scaling       Scaling
	RackSize      int
}

// AccessPoint is the share of reads that found every replica busy.
type AccessPoint struct {
	Policy      Policy  `json:"policy"`
	Replicas    int     `json:"replicas"`
	Utilisation float64 `json:"utilisation"`
	Failed      int     `json:"failed"`
	Accesses    int     `json:"accesses"`
}

// FailedShare is the share of failed reads.
func (a AccessPoint) FailedShare() float64 { return float64(a.Failed) / float64(max(1, a.Accesses)) }

// Availability places cfg.Blocks blocks by each policy and replication, then
// for each target utilisation scales every tenant's series so the
// datacenter's mean reaches it, and reads random blocks at random times: a
// read fails when every replica's server is busy (its primary tenant at or
// above the threshold), as the blob tier would deny it.
func Availability(dc synth.Datacenter, cfg AccessConfig, policies []Policy, replicas []int) ([]AccessPoint, error) {
	if cfg.RackSize == 0 {
		cfg.RackSize = 20
	}
	if len(dc.Tenants) == 0 || len(dc.Tenants[0].Series.Values) == 0 {
		return nil, fmt.Errorf("the datacenter has no utilisation series")
	}
	slots := len(dc.Tenants[0].Series.Values)
	w := buildWorld(dc, cfg.RackSize)
	var out []AccessPoint
	for _, target := range cfg.Utilisations {
		k := scaleFor(dc, target, cfg.Scaling)
		busy := make([][]bool, len(dc.Tenants))
		for ti, t := range dc.Tenants {
			busy[ti] = make([]bool, slots)
			for s, v := range t.Series.Values {
				busy[ti][s] = scale(v, k, cfg.Scaling) >= cfg.BusyThreshold
			}
		}
		for _, pol := range policies {
			for _, r := range replicas {
				rng := rand.New(rand.NewPCG(cfg.Seed, uint64(r)))
				p := placer{cfg: Config{Policy: pol, Replicas: r}, rng: rng, g: w.grid, servers: w.servers, index: w.index, byRack: w.byRack}
				placed := make([][]int, cfg.Blocks)
				for b := range placed {
					placed[b], _ = p.initial(rng.IntN(len(w.servers)))
				}
				pt := AccessPoint{Policy: pol, Replicas: r, Utilisation: target, Accesses: cfg.Accesses}
				for a := 0; a < cfg.Accesses; a++ {
					b, slot := rng.IntN(cfg.Blocks), rng.IntN(slots)
					if !slices.ContainsFunc(placed[b], func(n int) bool { return !busy[w.tenantOf[n]][slot] }) {
						pt.Failed++
					}
				}
				out = append(out, pt)
			}
		}
	}
	return out, nil
}

// scaleFor finds the factor that brings the server-weighted mean scaled
// utilisation to target (bisection; the mean grows with the factor).
func scaleFor(dc synth.Datacenter, target float64, how Scaling) float64 {
	meanAt := func(k float64) float64 {
		sum, n := 0.0, 0.0
		for _, t := range dc.Tenants {
			w := float64(len(t.Nodes))
			for _, v := range t.Series.Values {
				sum += w * scale(v, k, how)
			}
			n += w * float64(len(t.Series.Values))
		}
		return sum / n
	}
	lo, hi := 0.01, 100.0
	for i := 0; i < 50; i++ {
		mid := (lo + hi) / 2
		if meanAt(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
