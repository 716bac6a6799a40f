package main

import (
	"fmt"
	"sync"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

// runAll simulates every configuration, workers at a time, with one
// progress bar over all of them; results keep the configurations' order.
func runAll(cfgs []schedsim.Config, workers int) ([]schedsim.Result, error) {
	results := make([]schedsim.Result, len(cfgs))
	errs := make([]error, len(cfgs))
	progress := make([]float64, len(cfgs))
	var mu sync.Mutex
	report := func(i int, done float64) {
		mu.Lock()
		defer mu.Unlock()
		progress[i] = done
		var sum float64
		for _, p := range progress {
			sum += p
		}
		progressBar(fmt.Sprintf("%d runs", len(cfgs)), int(1000*sum/float64(len(cfgs))), 1000)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < max(1, workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				cfg := cfgs[i]
				cfg.Progress = func(done float64) { report(i, done) }
				results[i], errs[i] = schedsim.Run(cfg)
				report(i, 1)
			}
		}()
	}
	for i := range cfgs {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}
