package storagesim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/sim/schedsim"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// Scaling stretches a tenant's utilisation to sweep the datacenter's load,
// as the paper's simulator does: the scheduling simulator's scaling
// (schedsim.Scale), linear (saturating at 100%) or n-th root.
type Scaling = schedsim.Scaling

const (
	Linear = schedsim.Linear
	Root   = schedsim.Root
)

// DefaultBusyThreshold is the utilisation (percent) at which the harvest
// driver flags a server busy for the blob tier by default: the edge of the
// default CPU reserve, 100% - 33% = 67%. The blob front reads no replica
// from a busy server.
func DefaultBusyThreshold() float64 {
	reserve, err := guard.ParseAmount(guard.DefaultReserveCPU, 100)
	if err != nil {
		panic(err) // a constant of the guard package
	}
	return 100 - reserve
}

// AccessConfig says how to measure availability.
type AccessConfig struct {
	Seed         uint64
	Blocks       int       // placed before the reads
	Accesses     int       // reads per policy, replication and utilisation
	Utilisations []float64 // target mean primary-tenant utilisations (percent) over the read window
	// BusyThreshold: a server is busy at or above this utilisation
	// (percent); default DefaultBusyThreshold.
	BusyThreshold float64
	Scaling       Scaling
	// HistoryDays of each series only give the grid its tenants' peaks
	// (of the scaled utilisation, as the blob tier would see them at that
	// load); the reads sample the days after them.
	HistoryDays int
	RackSize    int
	// Steering is the blob front's placement beyond Algorithm 2; its
	// tenants' BusyHours come from the history days at the run's load.
	Steering
	// Writers says who writes blocks (default NodeWriters, the paper's).
	Writers Writers
	// Fill is the share of the servers' space the blocks fill (0: no
	// limit): each server holds at most ceil(blocks x R / servers / Fill)
	// replicas, and the grid draws only among servers with room, as the
	// blob front's does, re-clustered by free space as it fills.
	Fill float64
}

// AccessPoint is the share of reads that found every replica busy at one
// utilisation.
type AccessPoint struct {
	Datacenter  string  `json:"datacenter"`
	RunSeed     uint64  `json:"run_seed"` // the run's placement and reads (AccessConfig.Seed)
	Policy      Policy  `json:"policy"`
	Replicas    int     `json:"replicas"`
	Utilisation float64 `json:"utilisation"` // target mean over the read window, percent
	// BusyPct is the share of server-slots of the read window at or above
	// the busy threshold.
	BusyPct float64 `json:"busy_server_percent"`
	Failed  int     `json:"failed"`
	// FailedOnLoneSlot counts the failed reads at which some replica's
	// server was busy for that one slot of the read window (a single
	// 2-minute sample at or above the threshold, below it before and after;
	// the window's first and last slots look at one neighbour): reads
	// that history, which gives each server's busy shares per hour of the
	// day, could hardly have foreseen.
	FailedOnLoneSlot int     `json:"failed_on_lone_busy_slot"`
	Accesses         int     `json:"accesses"`
	FailedPct        float64 `json:"failed_percent"`
	// MostLoaded is the most replicas any server got over the mean per
	// server: what steering picks (HourCandidates) costs in balance.
	MostLoaded float64 `json:"most_loaded_server_vs_mean"`
}

// Availability places cfg.Blocks blocks by each policy and replication and,
// at each target utilisation, scales every tenant's series (cfg.Scaling)
// so the read window's server-weighted mean reaches it, rebuilds the grid
// from the scaled history, and reads random blocks at random slots of the
// read window: a read fails when every replica's server is busy, as the
// blob front then answers SlowDown. progress (may be nil) hears how many of
// the utilisations are done.
func Availability(dc synth.Datacenter, cfg AccessConfig, policies []Policy, replicas []int, progress func(done, total int)) ([]AccessPoint, error) {
	if cfg.RackSize == 0 {
		cfg.RackSize = 20
	}
	if cfg.BusyThreshold == 0 {
		cfg.BusyThreshold = DefaultBusyThreshold()
	}
	if cfg.Scaling == "" {
		cfg.Scaling = Linear
	}
	var err error
	if cfg.Writers, err = ParseWriters(string(cfg.Writers)); err != nil {
		return nil, err
	}
	if len(dc.Tenants) == 0 {
		return nil, fmt.Errorf("the datacenter has no tenants")
	}
	slots := len(dc.Tenants[0].Series.Values)
	hist := cfg.HistoryDays * history.SlotsPerDay
	if hist < 1 || hist >= slots {
		return nil, fmt.Errorf("the series hold %d slots: want at least one day of history (%d asked) and a read window after it", slots, hist)
	}
	for _, t := range dc.Tenants {
		if len(t.Series.Values) != slots {
			return nil, fmt.Errorf("tenant %s has %d slots, the first %d", t.ID, len(t.Series.Values), slots)
		}
	}
	if cfg.Blocks < 1 || cfg.Accesses < 1 {
		return nil, fmt.Errorf("want at least one block and one access")
	}
	if cfg.Fill < 0 || cfg.Fill > 1 {
		return nil, fmt.Errorf("fill %v: want a share of the space, 0-1 (0: no limit)", cfg.Fill)
	}
	// What the history gives the grid, whatever the load: each tenant's
	// reimage rate and its unscaled peak. Scaling is non-decreasing, so the
	// peak of the scaled history is the scaled peak.
	base, _ := synthTenants(dc, cfg.HistoryDays)
	peaks := make([]float64, len(dc.Tenants))
	for i, t := range dc.Tenants {
		peaks[i] = nodes.PeakCPU(t.Series.Values[:hist])
	}
	busyAt := make([][]bool, len(dc.Tenants)) // tenant -> read-window slot -> busy at this load
	for i := range busyAt {
		busyAt[i] = make([]bool, slots-hist)
	}
	var out []AccessPoint
	for ui, target := range cfg.Utilisations {
		if progress != nil {
			progress(ui, len(cfg.Utilisations))
		}
		k := scaleFor(dc, target, cfg.Scaling, hist)
		tenants := slices.Clone(base)
		busySlots, serverSlots := 0.0, 0.0
		for i, t := range dc.Tenants {
			tenants[i].PeakCPU = schedsim.Scale(cfg.Scaling, k, peaks[i])
			if cfg.HourCandidates > 1 {
				scaled := make([]float64, hist)
				for s, v := range t.Series.Values[:hist] {
					scaled[s] = schedsim.Scale(cfg.Scaling, k, v)
				}
				tenants[i].BusyHours = nodes.BusyHours(scaled, t.Series.Start, cfg.BusyThreshold)
			}
			for s, v := range t.Series.Values[hist:] {
				busyAt[i][s] = schedsim.Scale(cfg.Scaling, k, v) >= cfg.BusyThreshold
				if busyAt[i][s] {
					busySlots += float64(len(t.Nodes))
				}
				serverSlots += float64(len(t.Nodes))
			}
		}
		w, err := buildWorld(tenants, cfg.RackSize)
		if err != nil {
			return nil, err
		}
		w.steer(cfg.Steering)
		for _, pol := range policies {
			for _, r := range replicas {
				if r < 1 || r > len(w.id) {
					return nil, fmt.Errorf("%d replicas with %d servers", r, len(w.id))
				}
				placed, perServer, rng, err := placeAll(w, cfg, pol, r)
				if err != nil {
					return nil, err
				}
				most, total := 0, 0
				for _, n := range perServer {
					most, total = max(most, int(n)), total+int(n)
				}
				pt := AccessPoint{Datacenter: dc.Profile.Name, RunSeed: cfg.Seed, Policy: pol, Replicas: r, Utilisation: target,
					BusyPct: 100 * busySlots / serverSlots, Accesses: cfg.Accesses,
					MostLoaded: float64(most) / (float64(total) / float64(len(w.id)))}
				for a := 0; a < cfg.Accesses; a++ {
					b, slot := rng.IntN(cfg.Blocks), rng.IntN(slots-hist)
					allBusy := true
					for _, n := range placed[b] {
						if !busyAt[w.tenantOf[n]][slot] {
							allBusy = false
							break
						}
					}
					if allBusy {
						pt.Failed++
						for _, n := range placed[b] {
							if loneBusySlot(busyAt[w.tenantOf[n]], slot) {
								pt.FailedOnLoneSlot++
								break
							}
						}
					}
				}
				pt.FailedPct = 100 * float64(pt.Failed) / float64(pt.Accesses)
				out = append(out, pt)
			}
		}
	}
	if progress != nil {
		progress(len(cfg.Utilisations), len(cfg.Utilisations))
	}
	return out, nil
}

// loneBusySlot says whether slot s is busy and its neighbours are not.
func loneBusySlot(busy []bool, s int) bool {
	return busy[s] && (s == 0 || !busy[s-1]) && (s == len(busy)-1 || !busy[s+1])
}

// placeAll places cfg.Blocks blocks of r replicas by policy pol and
// returns each block's servers, how many replicas each server holds, and
// the run's random source for the reads.
func placeAll(w *world, cfg AccessConfig, pol Policy, r int) ([][]int32, []int32, *rand.Rand, error) {
	capacity := int32(0)
	if cfg.Fill > 0 {
		capacity = int32(math.Ceil(float64(cfg.Blocks*r) / float64(len(w.id)) / cfg.Fill))
	}
	used := make([]int32, len(w.id))
	w.regrid(capacity, used)
	rng := runRNG(cfg.Seed, pol, r)
	p := placer{policy: pol, writers: cfg.Writers, replicas: r, rng: rng, w: w, capacity: capacity, used: used}
	placed := make([][]int32, cfg.Blocks)
	for b := range placed {
		if capacity > 0 && b > 0 && b%max(1, cfg.Blocks/30) == 0 {
			w.regrid(capacity, used) // the front re-clusters by free space after its scans
		}
		placed[b], _ = p.initial(int32(rng.IntN(len(w.id))))
		if placed[b] == nil {
			return nil, nil, nil, fmt.Errorf("no room for block %d of %d at fill %v", b, cfg.Blocks, cfg.Fill)
		}
		for _, n := range placed[b] {
			used[n]++
			if capacity > 0 {
				w.gridNode[n].Free--
			}
		}
	}
	return placed, used, rng, nil
}

// scaleFor finds the factor that brings the server-weighted mean scaled
// utilisation of the slots from `from` on to target (bisection on a sample
// of at most ~200k tenant-slots; the mean grows with the factor).
func scaleFor(dc synth.Datacenter, target float64, how Scaling, from int) float64 {
	window := len(dc.Tenants[0].Series.Values) - from
	stride := max(1, len(dc.Tenants)*window/200000)
	meanAt := func(k float64) float64 {
		sum, n := 0.0, 0.0
		for _, t := range dc.Tenants {
			w := float64(len(t.Nodes))
			for s := from; s < len(t.Series.Values); s += stride {
				sum += w * schedsim.Scale(how, k, t.Series.Values[s])
				n += w
			}
		}
		return sum / n
	}
	lo, hi := 0.01, 100.0
	for i := 0; i < 40; i++ {
		mid := (lo + hi) / 2
		if meanAt(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
