package proxy

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/harvest-platform/harvest/placer/jobtype"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

func TestLiveWeightsWinAndSwapWhileRewriting(t *testing.T) {
	only := func(pattern string) selectclass.Weights {
		return selectclass.Weights{"medium": {pattern: 1}}
	}
	live := NewLiveWeights(only("periodic"))
	rw := &Rewriter{
		Classes: fakeClasses{
			{Class: "constant-1", Pattern: "constant", RoomCPU: 10000, RoomMemoryMB: 32768},
			{Class: "periodic-1", Pattern: "periodic", RoomCPU: 10000, RoomMemoryMB: 32768},
		},
		History: fakeHistory{}, Thresholds: jobtype.Default(), Rng: rand.New(rand.NewPCG(1, 1)),
		Weights: only("constant"), LiveWeights: live, // static weights lose to live ones
	}
	class := func() string {
		_, d, err := rw.Rewrite(context.Background(), []byte(jobBody("new", "")))
		if err != nil || d == nil || len(d.Outcome.Classes) != 1 {
			t.Fatalf("rewrite: %v %+v", err, d)
		}
		return d.Outcome.Classes[0]
	}
	for range 5 {
		if c := class(); c != "periodic-1" {
			t.Fatalf("live weights favour periodic, got %s", c)
		}
	}
	live.Store(only("constant"))
	for range 5 {
		if c := class(); c != "constant-1" {
			t.Fatalf("swapped weights favour constant, got %s", c)
		}
	}
	var wg sync.WaitGroup // swaps during rewrites (go test -race checks them)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				if i == 0 {
					live.Store(only([]string{"constant", "periodic"}[j%2]))
				} else if _, _, err := rw.Rewrite(context.Background(), []byte(jobBody("new", ""))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}
