package storagesim

import (
	"testing"

	"github.com/harvest-platform/harvest/history/synth"
)

func datacenter(seed uint64, tenants int) synth.Datacenter {
	p := synth.DefaultProfile(seed, tenants)
	p.Days = 1          // series only feed the peak
	p.ReimageDays = 365 // a year of reimages
	return synth.Generate(p)
}

func TestGridLosesFewerBlocksThanStockAndIsReproducible(t *testing.T) {
	dc := datacenter(21, 300)
	results := map[Policy]map[int]Result{}
	for _, pol := range []Policy{Stock, Grid} {
		results[pol] = map[int]Result{}
		for _, r := range []int{3, 4} {
			res, err := Run(dc, Config{Seed: 1, Policy: pol, Replicas: r, Blocks: 20000, RepairPerHour: 30}, nil)
			if err != nil {
				t.Fatal(err)
			}
			results[pol][r] = res
			t.Logf("%-5s R=%d: %d of %d blocks lost (%.4f%%), %d reimages, %d repairs, %d degraded, %d servers",
				pol, r, res.Lost, res.Blocks, 100*res.LostShare(), res.Reimages, res.Repairs, res.Degraded, res.Servers)
		}
	}
	if results[Grid][3].Lost >= results[Stock][3].Lost {
		t.Errorf("R=3: grid lost %d, stock %d: the grid should lose fewer", results[Grid][3].Lost, results[Stock][3].Lost)
	}
	if results[Grid][4].Lost > results[Grid][3].Lost {
		t.Errorf("grid lost more with R=4 (%d) than R=3 (%d)", results[Grid][4].Lost, results[Grid][3].Lost)
	}
	again, _ := Run(dc, Config{Seed: 1, Policy: Grid, Replicas: 3, Blocks: 20000, RepairPerHour: 30}, nil)
	if again != results[Grid][3] {
		t.Fatalf("same seed, different result: %+v vs %+v", again, results[Grid][3])
	}
}
