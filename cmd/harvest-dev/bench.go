package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/dustin/go-humanize"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/cli"
	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/synth"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/internal/localcluster"
	"github.com/harvest-platform/harvest/internal/proc"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/labels"
)

// benchCommands: harvest-dev bench history (issue 23).
func benchCommands() map[string]cli.CommandFactory {
	var o benchOptions
	return map[string]cli.CommandFactory{
		"bench writes": benchWritesCommand(),
		"bench history": command.Simple{
			Name: "harvest-dev bench history", Synopsis: "Measure tenant history at datacenter scale against a real Consul",
			Usage: "harvest-dev bench history [-tenants 10000] [-days 35] [-format 3|4] [-consul-addr ADDR | -stack-bin DIR [-dev]]",
			Flags: func(fs *flag.FlagSet) {
				fs.IntVar(&o.tenants, "tenants", 1000, "primary tenants")
				fs.IntVar(&o.days, "days", 35, "days of history imported before the new day")
				fs.IntVar(&o.pool, "pool", 200, "distinct synthetic tenants, reused round-robin under distinct names")
				fs.Uint64Var(&o.seed, "seed", 1, "synthetic datacenter seed")
				fs.IntVar(&o.format, "format", history.LatestFormat, "history day format to write (3: sealed days as drivers sent them; 4: slot means to 0.1 point)")
				fs.StringVar(&o.consulAddr, "consul-addr", "", "use this Consul (empty: start a single server from -stack-bin, removed afterwards)")
				fs.StringVar(&o.stackBin, "stack-bin", envOr("HARVEST_STACK_BIN", ".cache/stack/bin"), "folder holding the consul binary")
				fs.BoolVar(&o.dev, "dev", false, "start Consul in -dev mode (Raft log and snapshots in memory) instead of a single server with a data directory")
				fs.IntVar(&o.concurrency, "read-concurrency", 4, "days read at once (classify.read_concurrency)")
				fs.IntVar(&o.survivalSample, "survival-sample", 100, "members of a class the survival replay replays at most (classify.survival_sample; 0: all)")
				fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the refreshes to this file")
				fs.StringVar(&o.memoryLimit, "memory-limit", "", "the placer's memory_limit (Go soft memory limit), e.g. 900MiB")
				fs.StringVar(&o.consulMemoryLimit, "consul-memory-limit", "", "start Consul with GOMEMLIMIT set to this (e.g. 800MiB), as an operator would")
			},
			Run: func(ctx context.Context, _ *flag.FlagSet) error { return benchHistory(ctx, o) },
		}.Factory(),
	}
}

type benchOptions struct {
	tenants, days, pool, concurrency int
	survivalSample, format           int
	seed                             uint64
	consulAddr, stackBin, cpuProfile string
	memoryLimit, consulMemoryLimit   string
	dev                              bool
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// stackBinary is the absolute path of a stack binary in dir (whose links,
// as make leaves them, are relative): the benchmarks start it in a
// directory of its own.
func stackBinary(dir, name string) (string, error) {
	bin, err := filepath.EvalSymlinks(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	return filepath.Abs(bin)
}

func benchHistory(ctx context.Context, o benchOptions) error {
	addr, consulPID := o.consulAddr, 0
	var client *consulapi.Client
	if addr == "" {
		bin, err := stackBinary(o.stackBin, "consul")
		if err != nil {
			return fmt.Errorf("consul binary: %w (build the stack with make, or pass -consul-addr)", err)
		}
		dir, err := os.MkdirTemp("", "harvest-bench-consul-")
		if err != nil {
			return err
		}
		var env []string
		if o.consulMemoryLimit != "" {
			env = append(env, "GOMEMLIMIT="+o.consulMemoryLimit)
		}
		c, err := localcluster.StartConsul(ctx, bin, dir, o.dev, env...)
		if err != nil {
			return err
		}
		defer c.Stop()
		addr, consulPID = c.Addr, c.PID
		mode := "single server, data directory"
		if o.dev {
			mode = "-dev"
		}
		fmt.Printf("consul %s at %s (pid %d), GOMEMLIMIT %q\n", mode, addr, consulPID, o.consulMemoryLimit)
	}
	consulRSS := func() string {
		if consulPID == 0 {
			return "n/a (external Consul)"
		}
		rss, peak, err := proc.RSS(consulPID)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%s (peak %s, Go heap in use %s)", mib(rss), mib(peak), mib(consulHeap(client)))
	}
	c, err := consulapi.NewClient(kv.ConsulConfig(addr, ""))
	if err != nil {
		return err
	}
	client = c
	store := history.NewStore(kv.NewConsul(client), "harvest-bench/")
	if f, err := store.InitFormat(ctx); err != nil || f != history.LatestFormat {
		return fmt.Errorf("history format %d (%v): bench a fresh prefix", f, err)
	}
	if o.format != history.LatestFormat {
		if err := store.SetFormat(ctx, o.format); err != nil {
			return err
		}
	}

	// tenants: a pool of synthetic ones, reused under distinct names
	p := synth.DefaultProfile(o.seed, min(o.pool, o.tenants))
	p.Days = o.days + 1
	p.Start = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -o.days)
	pool := synth.Generate(p).Tenants
	type tenant struct {
		id    history.TenantID
		nodes []string
		src   int
	}
	tenants := make([]tenant, o.tenants)
	var nodes []labels.Node
	for i := range tenants {
		src := pool[i%len(pool)]
		t := tenant{id: history.TenantID{Environment: src.ID.Environment, Function: fmt.Sprintf("%s-%05d", src.ID.Function, i)}, src: i % len(pool)}
		for k := range min(len(src.Nodes), 3) {
			t.nodes = append(t.nodes, fmt.Sprintf("%s-%05d-n%d", src.ID.Function, i, k))
		}
		tenants[i] = t
		nodes = append(nodes, labels.Node{ID: t.nodes[0], Name: t.nodes[0], Meta: map[string]string{labels.TenantKey: t.id.String()},
			Attributes: map[string]string{contract.AttrCapacityCores: "16", contract.AttrReserveCores: "1"}})
	}
	// Each tenant is its pool tenant plus its own noise (uniform, +-0.05
	// point, seeded by tenant and slot): copies that were byte-identical
	// would compress to nothing inside a bundle and understate what Consul
	// holds, while noise this small adds almost no entropy to series whose
	// own noise is 0.5-4 points.
	window := func(i, from, n int) history.Series {
		s := pool[tenants[i].src].Series
		out := make([]float64, n)
		for k := range out {
			out[k] = math.Max(0, math.Min(100, s.Values[from+k]+0.1*unitHash(uint64(i)<<32|uint64(from+k))-0.05))
		}
		return history.Series{Start: s.Start.Add(time.Duration(from) * history.Slot), Values: out}
	}
	parallel := func(n int, fn func(i int) error) error {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		work := make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					if err := fn(i); err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				}
			}()
		}
		for i := 0; i < n; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		close(errs)
		return <-errs
	}

	fmt.Printf("tenants %d x %d days (pool of %d synthetic tenants, profile %s, seed %d), history format %d, GOMAXPROCS %d\n",
		o.tenants, o.days, len(pool), p.Name, o.seed, o.format, runtime.GOMAXPROCS(0))
	start := time.Now()
	if err := parallel(len(tenants), func(i int) error { return store.EnsureTenant(ctx, tenants[i].id, tenants[i].nodes...) }); err != nil {
		return err
	}
	infos := time.Since(start)
	for d := 0; d < o.days; d++ {
		day := map[history.TenantID]history.Series{}
		for i, t := range tenants {
			day[t.id] = window(i, d*history.SlotsPerDay, history.SlotsPerDay)
		}
		if err := store.PutDays(ctx, day); err != nil {
			return err
		}
	}
	fmt.Printf("import: %s (tenant infos %s, %d days into bundles %s); consul RSS %s\n", time.Since(start).Round(time.Millisecond),
		infos.Round(time.Millisecond), o.days, (time.Since(start) - infos).Round(time.Millisecond), consulRSS())

	if o.memoryLimit != "" {
		n, err := humanize.ParseBytes(o.memoryLimit)
		if err != nil {
			return fmt.Errorf("-memory-limit: %w", err)
		}
		debug.SetMemoryLimit(int64(n))
		fmt.Printf("placer memory_limit %s\n", o.memoryLimit)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "placer", Level: hclog.Info, Output: os.Stderr})
	var clock time.Time
	r := &classes.Refresher{Store: store, Nodes: &benchNodes{nodes: nodes}, Config: classify.Default(), Log: log,
		Metrics: agent.NewMetrics(), Now: func() time.Time { return clock }, Retention: 42 * 24 * time.Hour,
		ReadConcurrency: o.concurrency, SurvivalSample: o.survivalSample}
	placerRSS := func() string {
		rss, peak, _ := proc.RSS(os.Getpid())
		return fmt.Sprintf("%s (peak since the reset %s)", mib(rss), mib(peak))
	}
	resetPeak := func() {
		runtime.GC()
		debug.FreeOSMemory()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
	}

	// CPU seconds, to compare with wall time on a shared machine: a refresh
	// that used c CPU-seconds needs at least c/2 s on two idle cores
	cpu := func() (self, consul float64) {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		if consulPID != 0 {
			consul = proc.CPUSeconds(consulPID)
		}
		return self, consul
	}
	measure := func(what string, fn func() error) error {
		s0, c0 := cpu()
		start := time.Now()
		err := fn()
		s1, c1 := cpu()
		fmt.Printf("%s: wall %s, CPU %.1fs in this process (placer) and %.1fs in Consul\n", what,
			time.Since(start).Round(time.Millisecond), s1-s0, c1-c0)
		return err
	}
	clock = p.Start.AddDate(0, 0, o.days).Add(-2 * time.Minute)
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	resetPeak()
	start = time.Now()
	var table *api.ClassTable
	if err := measure("cold refresh", func() (err error) { table, err = r.Refresh(ctx); return err }); err != nil {
		return err
	}
	fmt.Printf("cold refresh: %s, %d classes, %d unclassified; placer (this process) RSS %s; consul RSS %s\n",
		time.Since(start).Round(time.Millisecond), len(table.Classes), len(table.Unclassified), placerRSS(), consulRSS())

	// one new day, written as drivers write it: each tenant's own key
	start = time.Now()
	if err := parallel(len(tenants), func(i int) error {
		return store.PutSeries(ctx, tenants[i].id, window(i, o.days*history.SlotsPerDay, history.SlotsPerDay), nil)
	}); err != nil {
		return err
	}
	fmt.Printf("new day written as %d tenant keys: %s; consul RSS %s\n", len(tenants), time.Since(start).Round(time.Millisecond), consulRSS())
	clock = clock.Add(24 * time.Hour)
	resetPeak()
	start = time.Now()
	if err := measure("incremental refresh", func() (err error) { table, err = r.Refresh(ctx); return err }); err != nil {
		return err
	}
	fmt.Printf("incremental refresh (one new day): %s, %d classes, %d unclassified; placer RSS %s; consul RSS %s\n",
		time.Since(start).Round(time.Millisecond), len(table.Classes), len(table.Unclassified), placerRSS(), consulRSS())

	// two days on, a refresh seals that day: its tenant keys become bundles
	newDay := history.DateOf(clock)
	start = time.Now()
	st, err := store.Seal(ctx, newDay, newDay)
	if err != nil {
		return err
	}
	fmt.Printf("sealing the new day: %s, %d tenant days into bundles, %d tenant keys deleted; consul RSS %s\n",
		time.Since(start).Round(time.Millisecond), st.Tenants, st.Deleted, consulRSS())
	start = time.Now()
	if err := measure("refresh after sealing", func() (err error) { table, err = r.Refresh(ctx); return err }); err != nil {
		return err
	}
	return nil
}

// benchNodes stands in for Nomad: one node per tenant, with a driver size
// so that every class gets survival figures; label updates are accepted
// (by node ID through an index, so that labelling 10,000 nodes costs the
// bench nothing the placer would not pay against Nomad).
type benchNodes struct {
	nodes []labels.Node
	index map[string]int
}

func (b *benchNodes) Nodes(context.Context) ([]labels.Node, error) { return b.nodes, nil }
func (b *benchNodes) ApplyMeta(_ context.Context, u labels.Update) error {
	if b.index == nil {
		b.index = make(map[string]int, len(b.nodes))
		for i, n := range b.nodes {
			b.index[n.ID] = i
		}
	}
	i, ok := b.index[u.NodeID]
	if !ok {
		return nil
	}
	for k, v := range u.Set {
		b.nodes[i].Meta[k] = v
	}
	for _, k := range u.Unset {
		delete(b.nodes[i].Meta, k)
	}
	return nil
}

// consulHeap is Consul's own figure of its live Go heap (runtime.alloc_bytes).
func consulHeap(c *consulapi.Client) int64 {
	m, err := c.Agent().Metrics()
	if err != nil {
		return 0
	}
	for _, g := range m.Gauges {
		if strings.HasSuffix(g.Name, "runtime.alloc_bytes") {
			return int64(g.Value)
		}
	}
	return 0
}

// unitHash maps x to [0, 1) (splitmix64's finaliser).
func unitHash(x uint64) float64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
