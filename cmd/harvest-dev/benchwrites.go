package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/cli"
	consulapi "github.com/hashicorp/consul/api"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/internal/proc"
	"github.com/harvest-platform/harvest/kv"
)

// benchWritesCommand: harvest-dev bench writes measures the KV write rate
// that drivers' node samples cause, with the driver's policy (issue 23).
func benchWritesCommand() cli.CommandFactory {
	var o struct {
		drivers, tenants int
		every, duration  time.Duration
		stackBin         string
		edge             bool
	}
	return command.Simple{
		Name: "harvest-dev bench writes", Synopsis: "Measure the Consul KV writes that drivers' node samples cause",
		Usage: "harvest-dev bench writes [-drivers 10000] [-tenants 1000] [-every 10m] [-duration 2m] [-edge]",
		Flags: func(fs *flag.FlagSet) {
			fs.IntVar(&o.drivers, "drivers", 10000, "simulated harvest drivers (nodes)")
			fs.IntVar(&o.tenants, "tenants", 1000, "primary tenants the nodes belong to (round-robin)")
			fs.DurationVar(&o.every, "every", 10*time.Minute, "how often each driver sends its slots (the driver's flush interval)")
			fs.DurationVar(&o.duration, "duration", 2*time.Minute, "how long to measure")
			fs.BoolVar(&o.edge, "edge", false, "every driver sends at the same instant (the interval's edge) instead of at its hashed offset")
			fs.StringVar(&o.stackBin, "stack-bin", envOr("HARVEST_STACK_BIN", ".cache/stack/bin"), "folder holding the consul binary")
		},
		Run: func(ctx context.Context, _ *flag.FlagSet) error {
			bin, err := stackBinary(o.stackBin, "consul")
			if err != nil {
				return fmt.Errorf("consul binary: %w", err)
			}
			dir, err := os.MkdirTemp("", "harvest-bench-consul-")
			if err != nil {
				return err
			}
			c, err := localcluster.StartConsul(ctx, bin, dir, false)
			if err != nil {
				return err
			}
			defer c.Stop()
			client, err := consulapi.NewClient(kv.ConsulConfig(c.Addr, ""))
			if err != nil {
				return err
			}
			kv := &countingKV{Consul: kv.NewConsul(client)}
			store := history.NewStore(kv, "harvest-bench/")
			if _, err := store.InitFormat(ctx); err != nil {
				return err
			}
			slots := int(o.every / history.Slot)
			start := time.Now()
			var mu sync.Mutex
			var lat []time.Duration
			var failed atomic.Int64
			runCtx, cancel := context.WithTimeout(ctx, o.duration)
			defer cancel()
			cpu0 := proc.CPUSeconds(c.PID)
			var wg sync.WaitGroup
			for d := 0; d < o.drivers; d++ {
				node := fmt.Sprintf("node-%05d", d)
				tenant := history.TenantID{Environment: "bench", Function: fmt.Sprintf("t-%04d", d%o.tenants)}
				offset := history.FlushOffset(node, o.every)
				if o.edge {
					offset = 0
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next := start.Add(offset); ; next = next.Add(o.every) {
						select {
						case <-runCtx.Done():
							return
						case <-time.After(time.Until(next)):
						}
						batch := make([]history.Sample, slots)
						for i := range batch {
							batch[i] = history.Sample{Node: node, Time: next.Add(-time.Duration(slots-i) * history.Slot), CPU: float64(d%90 + i)}
						}
						t0 := time.Now()
						if err := store.AppendSamples(runCtx, tenant, batch); err != nil {
							if runCtx.Err() == nil {
								failed.Add(1)
							}
							continue
						}
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			secs := o.duration.Seconds()
			slices.Sort(lat)
			q := func(p float64) time.Duration {
				if len(lat) == 0 {
					return 0
				}
				return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(time.Millisecond)
			}
			rss, peak, _ := c.RSS()
			fmt.Printf("%d drivers over %d tenants, each sending %d slots every %s (%s), measured %s:\n", o.drivers, o.tenants, slots, o.every,
				map[bool]string{true: "all at the interval's edge", false: "at hashed offsets"}[o.edge], o.duration)
			fmt.Printf("  flushes %d (%.1f/s), failed %d; KV writes %d (%.1f/s), of which conflicts %d; KV reads %d (%.1f/s)\n",
				len(lat), float64(len(lat))/secs, failed.Load(), kv.cas.Load(), float64(kv.cas.Load())/secs, kv.conflicts.Load(),
				kv.gets.Load(), float64(kv.gets.Load())/secs)
			fmt.Printf("  flush latency p50 %s, p99 %s; Consul CPU %.1f%% of one core; Consul RSS %s (peak %s)\n",
				q(0.5), q(0.99), 100*(proc.CPUSeconds(c.PID)-cpu0)/secs, mib(rss), mib(peak))
			return nil
		},
	}.Factory()
}

// countingKV counts the KV operations the store makes.
type countingKV struct {
	*kv.Consul
	gets, cas, conflicts atomic.Int64
}

func (k *countingKV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	k.gets.Add(1)
	return k.Consul.Get(ctx, key)
}

func (k *countingKV) CAS(ctx context.Context, key string, v []byte, i uint64) (bool, error) {
	ok, err := k.Consul.CAS(ctx, key, v, i)
	k.cas.Add(1)
	if err == nil && !ok {
		k.conflicts.Add(1)
	}
	return ok, err
}
