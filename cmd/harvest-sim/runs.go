package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"sync"

	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// writeJSON writes v as indented JSON to path.
func writeJSON(path string, v any) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := command.PrintJSON(fh, v); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

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

// writeCSV writes rows (the header first) to path.
func writeCSV(path string, rows [][]string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(fh)
	_ = w.WriteAll(rows) // its error is w.Error's
	if err := w.Error(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
