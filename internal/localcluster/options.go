package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/contract"
)

// MaxClients is the most Nomad clients one port block has room for.
const MaxClients = 7

// Options say where the binaries are and what cluster to start.
type Options struct {
	// RunDir receives configs, data, logs, pid files and cluster.json.
	RunDir string
	// StackBin holds the nomad, consul and minio binaries (.cache/stack/bin).
	StackBin string
	// DriverBinary is the harvest-driver plugin installed in every client's
	// plugin_dir. Empty means no harvest driver.
	DriverBinary string
	// RoomDevice, with DriverBinary, is the harvest-room device plugin
	// installed beside it: every client's driver writes its room file and
	// the device serves it (driver/roomdevice). Empty means none.
	RoomDevice string
	// UsagePlugin, when set with DriverBinary and DevTool, is the external
	// usage-source plugin (harvest-usage-prometheus) every driver reads the
	// primary tenant through, from the cluster's metrics exporter (started
	// as `DevTool dev-cluster exporter`, DevTool being harvest-dev); the
	// driver's cgroup source is its fallback.
	UsagePlugin string
	DevTool     string
	// Nodes describe the Nomad clients; default DefaultNodes(3).
	Nodes []NodeSpec
	// NodeCores is how many cores each Nomad client is: to Nomad (the
	// client's cpu_total_compute, this many of the host's cores' MHz, so a
	// 2-core host can hold clients of a larger server's size), to the
	// harvest driver (capacity_cpu) and to the usage plugin
	// (capacity_cpu_cores). 0 means 2 to the driver and the plugin and
	// Nomad's own fingerprint of the host.
	NodeCores int
	// ReserveCores is each driver's reserve_cpu; 0 means 0.5.
	ReserveCores float64
	// Replay, which needs UsagePlugin and DevTool (the metrics exporter)
	// and not Bare, has the exporter serve each client's primary tenant
	// (NodeSpec.Tenant) from a CPU trace instead of its cgroup; State.Replay
	// says how to build the same trace (replay.go).
	Replay *ReplayOptions
	// ClaimDir holds the machine-wide port-block claims; default
	// $TMPDIR/harvest-localcluster.
	ClaimDir string
	// Detached leaves the cluster running after this process exits (the demo).
	// Otherwise every process gets SIGKILL from the kernel if this process
	// dies, and the next Up reaps what they leave behind.
	Detached bool
	// Secure starts Consul and Nomad with TLS and default-deny ACLs
	// (secure.go).
	Secure bool
	// Bare starts the agents only, as an operator's cluster is before
	// Harvest is installed: Consul, the Nomad server and clients (with the
	// harvest driver in plugin_dir when DriverBinary is set, reading the
	// primary through its own cgroup source), but no MinIO servers and no
	// metrics exporter. docs/install.md is followed on such a cluster.
	Bare bool
	// Logger reports progress; default a named hclog logger on stderr.
	Logger hclog.Logger
}

// NodeSpec is one Nomad client's identity: its name and static meta.
type NodeSpec struct {
	Name        string
	Tenant      string // harvest_tenant: the primary tenant (environment/function)
	Environment string // harvest_environment
	Rack        string // harvest_rack
}

// Meta is the node's static client meta.
func (n NodeSpec) Meta() map[string]string {
	return map[string]string{
		contract.NodeTenant:      n.Tenant,
		contract.NodeEnvironment: n.Environment,
		contract.NodeRack:        n.Rack,
	}
}

var defaultTenants = []struct{ env, function string }{
	{"search", "frontend"},
	{"ads", "indexer"},
	{"mail", "store"},
	{"maps", "tiles"},
	{"video", "transcode"},
	{"search", "index"},
	{"ads", "frontend"},
}

// DefaultNodes returns n nodes named client-1..n, each of a different
// primary tenant and rack.
func DefaultNodes(n int) []NodeSpec {
	nodes := make([]NodeSpec, n)
	for i := range nodes {
		t := defaultTenants[i%len(defaultTenants)]
		nodes[i] = NodeSpec{
			Name:        fmt.Sprintf("client-%d", i+1),
			Tenant:      t.env + "/" + t.function,
			Environment: t.env,
			Rack:        fmt.Sprintf("rack-%d", i%3+1),
		}
	}
	return nodes
}

func (o *Options) setDefaults() error {
	if o.RunDir == "" {
		return fmt.Errorf("localcluster: RunDir is required")
	}
	abs, err := filepath.Abs(o.RunDir)
	if err != nil {
		return err
	}
	o.RunDir = abs
	if o.StackBin, err = filepath.Abs(o.StackBin); err != nil {
		return err
	}
	for _, bin := range []string{"nomad", "consul", "minio"} {
		if _, err := os.Stat(filepath.Join(o.StackBin, bin)); err != nil {
			return fmt.Errorf("localcluster: %s not found in %s: run `make stack` first", bin, o.StackBin)
		}
	}
	if o.DriverBinary != "" {
		if o.DriverBinary, err = filepath.Abs(o.DriverBinary); err != nil {
			return err
		}
		if _, err := os.Stat(o.DriverBinary); err != nil {
			return fmt.Errorf("localcluster: harvest driver: %w (run `make build` first)", err)
		}
	}
	if o.RoomDevice != "" {
		if o.DriverBinary == "" {
			return errors.New("localcluster: the room device serves the harvest driver's room: it needs DriverBinary")
		}
		if o.RoomDevice, err = filepath.Abs(o.RoomDevice); err != nil {
			return err
		}
		if _, err := os.Stat(o.RoomDevice); err != nil {
			return fmt.Errorf("localcluster: room device: %w (run `make build` first)", err)
		}
	}
	if o.UsagePlugin != "" {
		for _, b := range []*string{&o.UsagePlugin, &o.DevTool} {
			if *b, err = filepath.Abs(*b); err != nil {
				return err
			}
			if _, err := os.Stat(*b); err != nil {
				return fmt.Errorf("localcluster: usage plugin: %w (run `make build` first)", err)
			}
		}
	}
	if len(o.Nodes) == 0 {
		o.Nodes = DefaultNodes(3)
	}
	if len(o.Nodes) > MaxClients {
		return fmt.Errorf("localcluster: %d nodes asked, at most %d fit a port block", len(o.Nodes), MaxClients)
	}
	if o.NodeCores < 0 || o.ReserveCores < 0 || o.reserveCores() >= float64(o.nodeCores()) {
		return fmt.Errorf("localcluster: NodeCores %d, ReserveCores %v: want a node of 1 core or more and a reserve below it", o.NodeCores, o.ReserveCores)
	}
	if err := o.checkReplay(); err != nil {
		return fmt.Errorf("localcluster: replay: %w", err)
	}
	if o.ClaimDir == "" {
		o.ClaimDir = DefaultClaimDir()
	}
	if o.Logger == nil {
		o.Logger = hclog.New(&hclog.LoggerOptions{Name: "cluster", Level: hclog.Info})
	}
	return nil
}

// DefaultClaimDir is where port-block claims live unless Options say otherwise.
func DefaultClaimDir() string { return filepath.Join(os.TempDir(), "harvest-localcluster") }
