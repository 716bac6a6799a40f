// Package driver is the harvest Nomad task-driver plugin: it runs harvested
// tasks as processes in the cgroups Nomad prepares (through Nomad's shared
// executor, cgroup v1 and v2), keeps a CPU and memory reserve for the
// server's primary tenant, refuses starts that would break it, and evicts
// harvested tasks youngest first when the primary tenant spikes.
//
// This file holds what the driver is (name, config specs, capabilities);
// driver.go and tasks.go hold what it does, guardloop.go the reserve,
// declared.go the reserve declared for the tenant through the placer, which
// takes the place of the config's reserve_cpu and reserve_memory, and
// plugins.go an external usage-source plugin read in place of the built-in
// source, which stays as its fallback, cgroups.go the harvested tasks'
// parent cgroup (lowest CPU weight, the guard's CPU cap), user.go who a task
// runs as, and metrics.go the driver's Prometheus series.
package driver

import (
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	"github.com/hashicorp/nomad/plugins/drivers/fsisolation"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/internal/version"
)

// Name is the driver name jobs use: `driver = "harvest"`.
const Name = contract.DriverName

// taskHandleVersion is the version of the driver state kept in task handles.
const taskHandleVersion = 1

var pluginInfo = &base.PluginInfoResponse{
	Type:              base.PluginTypeDriver,
	PluginApiVersions: []string{drivers.ApiVersion010},
	PluginVersion:     version.Number(),
	Name:              Name,
}

func defaulted(name, typ, def string) *hclspec.Spec {
	return hclspec.NewDefault(hclspec.NewAttr(name, typ, false), hclspec.NewLiteral(def))
}

// configSpec is the plugin "harvest-driver" { config { ... } } block of a
// Nomad client.
var configSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	"enabled": defaulted("enabled", "bool", "true"),
	// the reserve kept unless the tenant's declaration or the placer's
	// policy document declares one (declared.go)
	"reserve_cpu":    defaulted("reserve_cpu", "string", `"`+guard.DefaultReserveCPU+`"`),
	"reserve_memory": defaulted("reserve_memory", "string", `"`+guard.DefaultReserveMemory+`"`),
	// the least reserve a declaration (the placer's documents) may set;
	// below it a declared value is refused and the next source applies
	"reserve_floor_cpu":    defaulted("reserve_floor_cpu", "string", `"`+defaultReserveFloor+`"`),
	"reserve_floor_memory": defaulted("reserve_floor_memory", "string", `"`+defaultReserveFloor+`"`),
	"guard_interval":       defaulted("guard_interval", "string", `"`+defaultGuardInterval+`"`),
	"spike_check":          defaulted("spike_check", "string", `"`+defaultSpikeCheck+`"`),
	"admit_window":         defaulted("admit_window", "string", `"30s"`),
	"admit_margin_cpu":     defaulted("admit_margin_cpu", "number", "1"),
	"admit_margin_memory":  defaulted("admit_margin_memory", "number", "256"),
	// where the primary tenant's use comes from: "proc" (the host minus
	// harvested tasks) or "cgroup" (the primary tenant's cgroup)
	"usage_source":    defaulted("usage_source", "string", `"proc"`),
	"primary_cgroup":  hclspec.NewAttr("primary_cgroup", "string", false),
	"capacity_cpu":    hclspec.NewAttr("capacity_cpu", "number", false),
	"capacity_memory": hclspec.NewAttr("capacity_memory", "number", false),
	// an external usage source (plugins.go): the file of usage_source
	// blocks (the plugin manager's syntax) and the block the guard reads;
	// usage_source above is then its fallback while it is down
	"plugin_config": hclspec.NewAttr("plugin_config", "string", false),
	"usage_plugin":  hclspec.NewAttr("usage_plugin", "string", false),
	// where the driver writes its room for the harvest-room device plugin
	// (room.go); "" writes none
	"room_file": hclspec.NewAttr("room_file", "string", false),
	// where the driver serves its own Prometheus metrics (the plugin
	// manager's harvest_plugin_* series); "" serves none
	"metrics_address": hclspec.NewAttr("metrics_address", "string", false),
	// node samples into the tenant history, and the busy flag for the blob tier
	"tenant":         hclspec.NewAttr("tenant", "string", false),
	"node_name":      hclspec.NewAttr("node_name", "string", false),
	"consul_address": hclspec.NewAttr("consul_address", "string", false),
	"consul_prefix":  defaulted("consul_prefix", "string", `"harvest/"`),
	// Consul's token and TLS files (default: CONSUL_HTTP_TOKEN, CONSUL_CACERT,
	// ... of the client agent's environment, as connect.Consul reads them)
	"consul_token":           hclspec.NewAttr("consul_token", "string", false),
	"consul_token_file":      hclspec.NewAttr("consul_token_file", "string", false),
	"consul_ca_file":         hclspec.NewAttr("consul_ca_file", "string", false),
	"consul_cert_file":       hclspec.NewAttr("consul_cert_file", "string", false),
	"consul_key_file":        hclspec.NewAttr("consul_key_file", "string", false),
	"consul_tls_server_name": hclspec.NewAttr("consul_tls_server_name", "string", false),
	"busy_threshold":         hclspec.NewAttr("busy_threshold", "number", false),
	// the harvested tasks' parent cgroup (cgroups.go): lowest CPU weight,
	// SCHED_IDLE if cpu_idle, and the cap as whole CPUs ("cpuset") or a CFS
	// quota ("quota"); "none" leaves the tasks where Nomad puts them
	"harvest_cgroup": defaulted("harvest_cgroup", "string", `"`+defaultHarvestCgroup+`"`),
	"cpu_idle":       defaulted("cpu_idle", "bool", "true"),
	"cap_method":     defaulted("cap_method", "string", `"cpuset"`),
	// the CPU reserve lent to the harvested tasks while the primary tenant
	// rounds up to no core (guard.Policy.LendIdleReserve)
	"lend_idle_reserve": defaulted("lend_idle_reserve", "bool", "true"),
	// suppression before eviction and the fail-safe (guard.Policy)
	"evict_grace":    defaulted("evict_grace", "string", `"`+defaultEvictGrace+`"`),
	"progress_share": defaulted("progress_share", "number", "1"),
	"stale_after":    defaulted("stale_after", "string", `"`+defaultStaleAfter+`"`),
	// who a task runs as (user.go)
	"default_user":     defaulted("default_user", "string", `"nobody"`),
	"allow_root":       defaulted("allow_root", "bool", "false"),
	"denied_host_uids": hclspec.NewAttr("denied_host_uids", "string", false),
	"denied_host_gids": hclspec.NewAttr("denied_host_gids", "string", false),
})

// taskConfigSpec is a task's config { ... } block.
var taskConfigSpec = hclspec.NewObject(map[string]*hclspec.Spec{
	"command": hclspec.NewAttr("command", "string", true),
	"args":    hclspec.NewAttr("args", "list(string)", false),
})

var capabilities = &drivers.Capabilities{
	SendSignals: true,
	Exec:        true,
	FSIsolation: fsisolation.None,
}

// Config is the decoded plugin config block.
type Config struct {
	Enabled             bool    `codec:"enabled"`
	ReserveCPU          string  `codec:"reserve_cpu"`
	ReserveMemory       string  `codec:"reserve_memory"`
	ReserveFloorCPU     string  `codec:"reserve_floor_cpu"`
	ReserveFloorMemory  string  `codec:"reserve_floor_memory"`
	GuardInterval       string  `codec:"guard_interval"`
	SpikeCheck          string  `codec:"spike_check"`
	AdmitWindow         string  `codec:"admit_window"`
	AdmitMarginCPU      float64 `codec:"admit_margin_cpu"`
	AdmitMarginMemory   float64 `codec:"admit_margin_memory"`
	UsageSource         string  `codec:"usage_source"`
	PrimaryCgroup       string  `codec:"primary_cgroup"`
	CapacityCPU         float64 `codec:"capacity_cpu"`
	CapacityMemory      float64 `codec:"capacity_memory"`
	PluginConfig        string  `codec:"plugin_config"`
	UsagePlugin         string  `codec:"usage_plugin"`
	MetricsAddress      string  `codec:"metrics_address"`
	RoomFile            string  `codec:"room_file"`
	Tenant              string  `codec:"tenant"`
	NodeName            string  `codec:"node_name"`
	ConsulAddress       string  `codec:"consul_address"`
	ConsulPrefix        string  `codec:"consul_prefix"`
	ConsulToken         string  `codec:"consul_token"`
	ConsulTokenFile     string  `codec:"consul_token_file"`
	ConsulCAFile        string  `codec:"consul_ca_file"`
	ConsulCertFile      string  `codec:"consul_cert_file"`
	ConsulKeyFile       string  `codec:"consul_key_file"`
	ConsulTLSServerName string  `codec:"consul_tls_server_name"`
	BusyThreshold       float64 `codec:"busy_threshold"`
	HarvestCgroup       string  `codec:"harvest_cgroup"`
	CPUIdle             bool    `codec:"cpu_idle"`
	CapMethod           string  `codec:"cap_method"`
	LendIdleReserve     bool    `codec:"lend_idle_reserve"`
	EvictGrace          string  `codec:"evict_grace"`
	ProgressShare       float64 `codec:"progress_share"`
	StaleAfter          string  `codec:"stale_after"`
	DefaultUser         string  `codec:"default_user"`
	AllowRoot           bool    `codec:"allow_root"`
	DeniedHostUIDs      string  `codec:"denied_host_uids"`
	DeniedHostGIDs      string  `codec:"denied_host_gids"`
}

// TaskConfig is the decoded task config block.
type TaskConfig struct {
	Command string   `codec:"command"`
	Args    []string `codec:"args"`
}
