package driver

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client/lib/cpustats"
	"github.com/hashicorp/nomad/drivers/shared/eventer"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/harvestcg"
	"github.com/harvest-platform/harvest/driver/nodereport"
	"github.com/harvest-platform/harvest/driver/usage"
	"github.com/harvest-platform/harvest/plugins/usagesource"
)

// fingerprintPeriod is how often the driver re-announces its health.
const fingerprintPeriod = 30 * time.Second

// Driver is the harvest task driver.
type Driver struct {
	logger  hclog.Logger
	eventer *eventer.Eventer
	ctx     context.Context
	cancel  context.CancelFunc
	tasks   *taskStore
	metrics *prometheus.Registry // the guard's harvest_driver_* and the plugin manager's harvest_plugin_* series
	met     *driverMetrics
	spike   spikeWatch // the spike check's state (spike.go); the guard loop's alone
	// the harvested tasks' CPU over the ticks' and the peeks' windows (harvestmeter.go)
	tickMeter, peekMeter usagesource.Meter
	clock                func() time.Time // what the meters read the time from (time.Now; a test's own)

	mu          sync.Mutex // guards everything below
	config      Config
	nomadConfig *base.ClientDriverConfig
	compute     cpustats.Compute
	cpuOverride bool // the client's cpu_total_compute overrides the fingerprinted compute (coreMHzLocked)
	// admitMu serializes admissions; starting holds the allocations of
	// admitted tasks not tracked yet (admit, unreserve), startingInstances
	// the room device's instances they hold (room.go).
	admitMu           sync.Mutex
	starting          map[string]guard.Resources
	startingInstances map[string][]string
	roomFileFailing   bool // mu: the last room file write failed (writeRoomFile)
	settings          settings
	source            usage.Source
	peeker            usage.Peeker // what the spike check peeks at (spike.go); nil for none
	plugin            *usagePlugin // the external usage source (plugins.go); nil without one
	sourceErr         error
	tracker           *guard.Tracker
	primary           guard.Resources // latest good measurement
	lastGood          time.Time       // when it was taken
	guard             *guard.Guard    // suppression and eviction across ticks
	failSafe          bool            // the primary is unmeasured for longer than stale_after
	suppressed        time.Time       // when the last suppression the tasks were told of began
	cgroup            *harvestcg.Parent
	loopStarted       bool
	looped            chan struct{} // closed once the guard loop's first tick is done
	reporter          *nodereport.Reporter
	declared          declared         // the last good declarations (declared.go)
	announced         effectiveReserve // the effective reserve last logged
	// closed (and replaced) when the effective reserve or the usage
	// plugin's state changes: the fingerprint loops wait on it
	fingerprintWake chan struct{}
}

var _ drivers.DriverPlugin = (*Driver)(nil)

// New returns a driver that logs to logger; Nomad's plugin loader calls it.
func New(logger hclog.Logger) *Driver {
	ctx, cancel := context.WithCancel(context.Background())
	logger = logger.Named(Name)
	d := &Driver{logger: logger, eventer: eventer.NewEventer(ctx, logger), ctx: ctx, cancel: cancel,
		tasks: newTaskStore(), metrics: prometheus.NewRegistry(), config: Config{Enabled: true}, fingerprintWake: make(chan struct{}),
		looped: make(chan struct{}), clock: time.Now}
	d.met = newDriverMetrics(d.metrics, d.harvestCgroup)
	return d
}

func (d *Driver) PluginInfo() (*base.PluginInfoResponse, error) { return pluginInfo, nil }
func (d *Driver) ConfigSchema() (*hclspec.Spec, error)          { return configSpec, nil }
func (d *Driver) TaskConfigSchema() (*hclspec.Spec, error)      { return taskConfigSpec, nil }
func (d *Driver) Capabilities() (*drivers.Capabilities, error)  { return capabilities, nil }

// SetConfig decodes the client's plugin config block, builds the usage
// source (the built-in, or an external plugin over it: plugins.go) and
// starts the guard loop, the reports to the tenant history and the reading
// of the declared reserve.
func (d *Driver) SetConfig(c *base.Config) error {
	var cfg Config
	if len(c.PluginConfig) != 0 {
		if err := base.MsgPackDecode(c.PluginConfig, &cfg); err != nil {
			return err
		}
	}
	kind, conf, err := builtinConfig(cfg)
	if err != nil {
		return fmt.Errorf("harvest driver: usage source: %w", err)
	}
	var source usage.Source
	var plug *usagePlugin
	if cfg.PluginConfig != "" || cfg.UsagePlugin != "" {
		plug, source, err = d.startUsagePlugin(cfg, kind, conf)
	} else {
		source, err = usage.New(kind, conf)
	}
	if err != nil {
		return fmt.Errorf("harvest driver: usage source: %w", err)
	}
	peeker := spikePeeker(source, plug != nil, kind, conf)
	s, err := parseSettings(cfg, source.Capacity())
	if err != nil {
		plug.close()
		return fmt.Errorf("harvest driver: %w", err)
	}
	cg, err := d.openCgroup(s)
	if err != nil {
		plug.close()
		return fmt.Errorf("harvest driver: harvest_cgroup %s: %w (set harvest_cgroup = %q to run harvested tasks where Nomad puts them, at its weights)",
			s.harvestCgroup, err, noCgroup)
	}
	d.mu.Lock()
	if d.ctx.Err() != nil { // shut down meanwhile: leave no plugin running
		d.mu.Unlock()
		plug.close()
		return fmt.Errorf("harvest driver: shut down")
	}
	old := d.plugin
	defer old.close() // after the unlock below: a closing plugin may wait on its process
	defer d.mu.Unlock()
	// the cap the guard plans is the one the cgroup enforces (none: no cgroup)
	s.policy.WholeCPUs = cg != nil && cg.CapMethod() == harvestcg.CapCpuset
	d.config, d.source, d.peeker, d.settings, d.plugin, d.cgroup = cfg, source, peeker, s, plug, cg
	d.tracker = guard.NewTracker(s.hysteresis.AdmitWindow)
	d.guard = &guard.Guard{Policy: s.policy}
	d.lastGood, d.failSafe, d.suppressed = time.Now(), false, time.Time{}
	if plug != nil {
		plug.fb.MaxAge = s.policy.StaleAfter // a plugin's stale samples hand over to the built-in too
	}
	if c.AgentConfig != nil {
		d.nomadConfig = c.AgentConfig.Driver
		d.compute = c.AgentConfig.Compute()
		d.cpuOverride = c.AgentConfig.Driver != nil && c.AgentConfig.Driver.Topology != nil &&
			c.AgentConfig.Driver.Topology.OverrideTotalCompute > 0
	}
	if cfg.Enabled && !d.loopStarted {
		d.loopStarted = true
		store, err := consulStore(cfg)
		if err != nil {
			d.logger.Error("no Consul client: node samples, busy flag and declared reserve off", "error", err)
		}
		d.reporter = newReporter(d.ctx, cfg, s.capacity, store, d.logger.Named("report"))
		if w := newDeclWatcher(cfg, store, d.logger.Named("declarations")); w != nil {
			go d.watchDeclarations(w)
		}
		go d.guardLoop()
		if cfg.MetricsAddress != "" {
			if err := d.serveMetrics(cfg.MetricsAddress); err != nil {
				return fmt.Errorf("harvest driver: metrics_address: %w", err)
			}
		}
	}
	r := d.reserveLocked()
	d.announced = r
	d.wakeFingerprintLocked()
	d.reporter.ReserveChanged(r.CPU)
	d.logger.Info("configured", "usage_source", kind, "usage_plugin", cfg.UsagePlugin, "capacity_cores", s.capacity.CPU,
		"capacity_mib", s.capacity.MemoryMiB, "reserve_cores", r.CPU, "cores_from", r.CPUFrom,
		"reserve_mib", r.MemoryMiB, "memory_from", r.MemoryFrom)
	return nil
}

// builtinConfig checks the usage_source attributes and returns the
// built-in source's kind and its config map (usage.New builds it).
func builtinConfig(cfg Config) (string, map[string]string, error) {
	switch cfg.UsageSource {
	case "", "proc":
		if cfg.CapacityCPU > 0 || cfg.CapacityMemory > 0 {
			return "", nil, fmt.Errorf("capacity_cpu and capacity_memory are for usage_source = \"cgroup\"; the proc source measures the host")
		}
		return "proc", map[string]string{}, nil
	case "cgroup":
		if cfg.PrimaryCgroup == "" || cfg.CapacityCPU <= 0 || cfg.CapacityMemory <= 0 {
			return "", nil, fmt.Errorf("usage_source = \"cgroup\" needs primary_cgroup, capacity_cpu and capacity_memory")
		}
		return "cgroup", map[string]string{"primary_cgroup": cfg.PrimaryCgroup,
			"capacity_cpu":    strconv.FormatFloat(cfg.CapacityCPU, 'g', -1, 64),
			"capacity_memory": strconv.FormatFloat(cfg.CapacityMemory, 'g', -1, 64)}, nil
	}
	return "", nil, fmt.Errorf("usage_source %q: want \"proc\" or \"cgroup\"", cfg.UsageSource)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Fingerprint reports the driver's health now, then periodically and
// whenever the effective reserve, the usage plugin's state or the room
// (room.go) changes, with only coarse attributes (fast-changing ones would
// storm the scheduler).
func (d *Driver) Fingerprint(ctx context.Context) (<-chan *drivers.Fingerprint, error) {
	ch := make(chan *drivers.Fingerprint)
	go func() {
		defer close(ch)
		ticker := time.NewTicker(fingerprintPeriod)
		defer ticker.Stop()
		roomTicker := time.NewTicker(roomCheckPeriod)
		defer roomTicker.Stop()
		for {
			d.mu.Lock()
			changed := d.fingerprintWake // taken before the fingerprint: no change is missed
			d.mu.Unlock()
			sent := d.roomNow()
			select {
			case ch <- d.fingerprint(sent):
			case <-ctx.Done():
				return
			case <-d.ctx.Done():
				return
			}
			for waiting := true; waiting; {
				select {
				case <-ticker.C:
					waiting = false
				case <-changed:
					waiting = false
				case <-roomTicker.C:
					waiting = !sent.moved(d.checkRoom())
				case <-ctx.Done():
					return
				case <-d.ctx.Done():
					return
				}
			}
		}
	}()
	return ch, nil
}

func (d *Driver) fingerprint(room roomAttr) *drivers.Fingerprint {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case !d.config.Enabled:
		return &drivers.Fingerprint{Health: drivers.HealthStateUndetected, HealthDescription: "disabled"}
	case d.source == nil:
		return &drivers.Fingerprint{Health: drivers.HealthStateUndetected, HealthDescription: "not configured yet"}
	case d.failSafe:
		why := "no good measurement"
		if d.sourceErr != nil {
			why = d.sourceErr.Error()
		}
		return &drivers.Fingerprint{Health: drivers.HealthStateUnhealthy,
			HealthDescription: fmt.Sprintf("failing safe: the primary tenant has not been measured for over %s (%s); harvested tasks evicted, none admitted",
				d.settings.policy.StaleAfter, why)}
	}
	r := d.reserveLocked()
	sourceName := d.source.Name()
	if d.plugin != nil {
		sourceName = d.plugin.builtin
	}
	fp := &drivers.Fingerprint{
		Attributes: map[string]*pstructs.Attribute{
			contract.AttrVersion:     pstructs.NewStringAttribute(pluginInfo.PluginVersion),
			contract.AttrUsageSource: pstructs.NewStringAttribute(sourceName),
			// the effective reserve, and where each value comes from: tenant, policy or config
			contract.AttrReserveCores:        pstructs.NewFloatAttribute(r.CPU, ""),
			contract.AttrReserveCoresSource:  pstructs.NewStringAttribute(r.CPUFrom),
			contract.AttrReserveMemory:       pstructs.NewIntAttribute(int64(r.MemoryMiB), "MiB"),
			contract.AttrReserveMemorySource: pstructs.NewStringAttribute(r.MemoryFrom),
			// the harvestable share is capacity minus reserve (placer's packing tiers)
			contract.AttrCapacityCores:  pstructs.NewFloatAttribute(d.settings.capacity.CPU, ""),
			contract.AttrCapacityMemory: pstructs.NewIntAttribute(int64(d.settings.capacity.MemoryMiB), "MiB"),
			// what admission keeps free on top of the reserve: the placer
			// counts it as reserve when it replays history for survival
			contract.AttrAdmitMarginCores:  pstructs.NewFloatAttribute(d.settings.hysteresis.AdmitMargin.CPU, ""),
			contract.AttrAdmitMarginMemory: pstructs.NewIntAttribute(int64(d.settings.hysteresis.AdmitMargin.MemoryMiB), "MiB"),
			// where harvested tasks run: "v1:/harvest", "v2:/harvest", or "none"
			contract.AttrCgroup:      pstructs.NewStringAttribute(d.cgroupAttr()),
			contract.AttrDefaultUser: pstructs.NewStringAttribute(d.settings.users.DefaultUser()),
		},
		Health:            drivers.HealthStateHealthy,
		HealthDescription: drivers.DriverHealthy,
	}
	if d.plugin != nil {
		// which plugin, and whether the guard reads it ("up") or the
		// built-in while it is down, hung, restarting or failing
		fp.Attributes[contract.AttrUsagePlugin] = pstructs.NewStringAttribute(d.plugin.name)
		fp.Attributes[contract.AttrUsagePluginState] = pstructs.NewStringAttribute(d.plugin.state())
	}
	room.addTo(fp.Attributes)
	if mhz := d.coreMHzLocked(); mhz > 0 {
		// the MHz of a task's CPU shares the driver counts as one core
		fp.Attributes[contract.AttrCoreMHz] = pstructs.NewFloatAttribute(mhz, "")
	}
	return fp
}

// TaskEvents streams the driver's task events (evictions among them).
func (d *Driver) TaskEvents(ctx context.Context) (<-chan *drivers.TaskEvent, error) {
	return d.eventer.TaskEvents(ctx)
}

// Shutdown stops the driver's background work and its usage plugin's
// process.
func (d *Driver) Shutdown() {
	d.cancel()
	d.mu.Lock()
	plug := d.plugin
	d.mu.Unlock()
	plug.close()
}

// Metrics is the driver's own registry: the guard's harvest_driver_*
// series (metrics.go) and the plugin manager's harvest_plugin_up,
// harvest_plugin_restarts_total, harvest_plugin_failures_total and
// harvest_plugin_fallback_active.
func (d *Driver) Metrics() prometheus.Gatherer { return d.metrics }
