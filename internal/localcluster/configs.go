package localcluster

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/harvest-platform/harvest/contract"
)

// Agent configs are HCL, as an operator would write them. Every string goes
// through %q, whose escapes HCL accepts, so a path with spaces or quotes
// cannot break a config.

// fingerprintDenylist keeps Nomad from probing cloud metadata services (they
// would leave 127.0.0.1, and with AWS_CA_BUNDLE set the agent aborts).
const fingerprintDenylist = "env_aws,env_gce,env_azure,env_digitalocean"

// driverDenylist drops drivers that cannot work here (no Docker engine, no
// JVM or QEMU) and would only log errors, and the test-only mock driver that
// development builds of Nomad carry.
const driverDenylist = "docker,podman,java,qemu,mock_driver"

// consulHTTPPorts is the ports block's HTTP line: the API on HTTPS only
// in a secure cluster.
func consulHTTPPorts(port int, sec *Secure) string {
	if sec == nil {
		return fmt.Sprintf("http     = %d", port)
	}
	return fmt.Sprintf("http     = -1\n  https    = %d", port)
}

func consulServerConfig(name string, p consulPorts, sec *Secure) string {
	extra := ""
	if sec != nil {
		extra = sec.consulSecureConfig("consul-server", sec.ConsulToken)
	}
	return fmt.Sprintf(`datacenter           = "dc1"
node_name            = %q
bind_addr            = "127.0.0.1"
client_addr          = "127.0.0.1"
disable_update_check = true
log_level            = "INFO"

ports {
  %s
  dns      = -1
  grpc     = -1
  grpc_tls = -1
  serf_lan = %d
  serf_wan = %d
  server   = %d
}
%s`, name, consulHTTPPorts(p.HTTP, sec), p.SerfLAN, p.SerfWAN, p.Server, extra)
}

func consulClientConfig(name, dataDir string, p consulPorts, join string, sec *Secure) string {
	extra := ""
	if sec != nil {
		extra = sec.consulSecureConfig("consul-client", sec.ConsulAgentToken)
	}
	return fmt.Sprintf(`datacenter           = "dc1"
node_name            = %q
data_dir             = %q
server               = false
bind_addr            = "127.0.0.1"
client_addr          = "127.0.0.1"
retry_join           = [%q]
disable_update_check = true
leave_on_terminate   = true
log_level            = "INFO"

ports {
  %s
  dns      = -1
  grpc     = -1
  grpc_tls = -1
  serf_lan = %d
  serf_wan = -1
  server   = %d
}
%s`, name, dataDir, join, consulHTTPPorts(p.HTTP, sec), p.SerfLAN, p.Server, extra)
}

func nomadCommon(name, dataDir string, p nomadPorts, sec *Secure, kind string) string {
	extra := ""
	if sec != nil {
		extra = sec.nomadSecureConfig(kind)
	}
	return fmt.Sprintf(`name                 = %q
region               = "global"
datacenter           = "dc1"
data_dir             = %q
bind_addr            = "127.0.0.1"
disable_update_check = true
log_level            = "INFO"

ports {
  http = %d
  rpc  = %d
  serf = %d
}

advertise {
  http = "127.0.0.1:%d"
  rpc  = "127.0.0.1:%d"
  serf = "127.0.0.1:%d"
}

# Every client of this cluster (tests, CLIs, the placer, the agents) comes
# from 127.0.0.1: the per-IP connection limit would throttle them as one.
limits {
  http_max_conns_per_client = 0
  rpc_max_conns_per_client  = 0
}
%s`, name, dataDir, p.HTTP, p.RPC, p.Serf, p.HTTP, p.RPC, p.Serf, extra)
}

// nomadConsulBlock is an agent's consul block; a secure cluster's servers
// also hand out workload identities Consul accepts (services and tasks).
func nomadConsulBlock(consulAddr string, sec *Secure, kind string) string {
	extra := ""
	if sec != nil {
		extra = sec.nomadConsulTLS(kind)
		if kind == "nomad-server" {
			extra += `
  service_identity {
    aud = ["consul.io"]
    ttl = "1h"
  }
  task_identity {
    aud = ["consul.io"]
    ttl = "1h"
  }
`
		}
	}
	return fmt.Sprintf(`
consul {
  address          = %q
  server_auto_join = false
  client_auto_join = false
%s}
`, consulAddr, extra)
}

func nomadServerConfig(name, dataDir string, p nomadPorts, consulAddr string, sec *Secure) string {
	return nomadCommon(name, dataDir, p, sec, "nomad-server") + `
server {
  enabled          = true
  bootstrap_expect = 1
}

client {
  enabled = false
}
` + nomadConsulBlock(consulAddr, sec, "nomad-server")
}

// nomadClientSpec is what one client's config needs beyond its ports.
type nomadClientSpec struct {
	name, dataDir, pluginDir, cgroupParent, server, consulAddr string
	meta                                                       map[string]string
	harvestDriver                                              bool
	primaryCgroup                                              string // the node's primary tenant's cgroup
	usagePluginConfig                                          string // the driver's plugin_config ("": none)
	driverMetrics                                              string // the driver's metrics_address
	harvestCgroup                                              string // the driver's harvest_cgroup
	secure                                                     *Secure
	cores                                                      int    // capacity_cpu (0: nodeCapacityCPU)
	reserveCPU                                                 string // reserve_cpu ("": defaultReserveCPU)
	totalCompute                                               int    // cpu_total_compute, MHz (0: Nomad's fingerprint)
	roomFile                                                   string // the driver's and the room device's room_file ("": no room device)
}

// roomFileOf is a client's room file when the cluster has the room device.
func roomFileOf(o *Options, clientDir string) string {
	if o.RoomDevice == "" {
		return ""
	}
	return filepath.Join(clientDir, "harvest-room.json")
}

// roomLines are the driver's room_file line and the room device's plugin
// block, when the client has one.
func roomLines(roomFile string) (driverLine, pluginBlock string) {
	if roomFile == "" {
		return "", ""
	}
	return fmt.Sprintf("    room_file           = %q\n", roomFile),
		fmt.Sprintf("\nplugin %q {\n  config {\n    room_file = %q\n  }\n}\n", contract.RoomDevicePlugin, roomFile)
}

// Each client's harvest driver watches its own primary tenant's cgroup
// against this capacity: every client shares one host here, so the host's
// /proc would show all of them at once.
const (
	nodeCapacityCPU    = 2
	nodeCapacityMemory = 4096
	defaultReserveCPU  = 0.5
)

// orCores is cores, or nodeCapacityCPU for 0.
func orCores(cores int) int {
	if cores > 0 {
		return cores
	}
	return nodeCapacityCPU
}

func nomadClientConfig(c nomadClientSpec, p nomadPorts) string {
	var b strings.Builder
	b.WriteString(nomadCommon(c.name, c.dataDir, p, c.secure, "nomad-client"))
	fmt.Fprintf(&b, "plugin_dir           = %q\n", c.pluginDir)
	fmt.Fprintf(&b, `
client {
  enabled           = true
  servers           = [%q]
  cgroup_parent     = %q
  network_interface = "lo"
  min_dynamic_port  = %d
  max_dynamic_port  = %d
%s
  meta {
`, c.server, c.cgroupParent, p.DynamicMin, p.DynamicMax, totalComputeLine(c.totalCompute))
	keys := make([]string, 0, len(c.meta))
	for k := range c.meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "    %s = %q\n", k, c.meta[k])
	}
	fmt.Fprintf(&b, `  }

  options {
    "fingerprint.denylist" = %q
    "driver.denylist"      = %q
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, fingerprintDenylist, driverDenylist)
	if c.harvestDriver {
		roomDriverLine, roomPlugin := roomLines(c.roomFile)
		fmt.Fprintf(&b, `
plugin "harvest-driver" {
  config {
    enabled             = true
    usage_source        = "cgroup"
    primary_cgroup      = %q
    capacity_cpu        = %d
    capacity_memory     = %d
    reserve_cpu         = %q
    reserve_memory      = "512"
    admit_window        = "5s"
    admit_margin_cpu    = 0.25
    admit_margin_memory = 128
    tenant              = %q
    node_name           = %q
    consul_address      = %q
    metrics_address     = %q
    harvest_cgroup      = %q
%s%s%s  }
}
`, c.primaryCgroup, orCores(c.cores), nodeCapacityMemory, or(c.reserveCPU, strconv.FormatFloat(defaultReserveCPU, 'g', -1, 64)),
			c.meta[contract.NodeTenant], c.name, driverConsulAddr(c.consulAddr, c.secure), c.driverMetrics, or(c.harvestCgroup, "none"), usagePluginLines(c.usagePluginConfig), driverSecureLines(c.secure), roomDriverLine)
		b.WriteString(roomPlugin)
	}
	b.WriteString(nomadConsulBlock(c.consulAddr, c.secure, "nomad-client"))
	return b.String()
}

// totalComputeLine sets the client's cpu_total_compute when there is one:
// the clients then stand for nodes of another size than the host's.
func totalComputeLine(mhz int) string {
	if mhz <= 0 {
		return ""
	}
	return fmt.Sprintf("  cpu_total_compute = %d\n", mhz)
}

// driverConsulAddr is the driver's consul_address: HTTPS in a secure
// cluster.
func driverConsulAddr(addr string, sec *Secure) string {
	if sec == nil {
		return addr
	}
	return "https://" + addr
}

// driverSecureLines give the driver its Consul token (driver.consul
// policy) and the CA.
func driverSecureLines(sec *Secure) string {
	if sec == nil {
		return ""
	}
	return fmt.Sprintf("    consul_token        = %q\n    consul_ca_file      = %q\n", sec.DriverConsulToken, sec.CAFile)
}

// usagePluginLines point the driver at its external usage source, when
// there is one.
func usagePluginLines(config string) string {
	if config == "" {
		return ""
	}
	return fmt.Sprintf("    plugin_config       = %q\n    usage_plugin        = %q\n", config, usagePluginName)
}

// usagePluginName is the usage_source block the drivers read.
const usagePluginName = "exporter"

// usagePluginConfig is a node's plugin configuration file: the external
// usage source reading the node's primary cgroup from the exporter, with the
// node's capacity of cores (0: nodeCapacityCPU; the exporter's host metrics
// are the whole machine's).
func usagePluginConfig(pluginDir, binary, exporterURL, primaryCgroup string, cores int) string {
	return fmt.Sprintf(`plugin_dir = %q

usage_source %q {
  driver       = %q
  call_timeout = "2s"
  config = {
    url                   = %q
    primary_cpu_metric    = "container_cpu_usage_seconds_total"
    primary_memory_metric = "container_memory_usage_bytes"
    primary_labels        = %q
    capacity_cpu_cores    = "%d"
    capacity_memory_bytes = "%d"
  }
}
`, pluginDir, usagePluginName, binary, exporterURL, "id="+primaryCgroup, orCores(cores), int64(nodeCapacityMemory)<<20)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
