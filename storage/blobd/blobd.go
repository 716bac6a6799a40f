// Package blobd runs harvest-blob: it registers the configured storage
// nodes, learns their tenants' reimage rates and peaks from the tenant
// history, follows the nodes' busy flags, and serves S3 through versitygw
// with the storage/front backend.
package blobd

import (
	"context"
	"fmt"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2/hclsimple"
	"github.com/versity/versitygw/embedgw"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/front"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// Config is harvest-blob's HCL configuration:
//
//	listen       = "127.0.0.1:9100"   # S3
//	admin_listen = "127.0.0.1:9101"   # /v1/status, /v1/metrics, /v1/health
//	access_key = "..."  secret_key = "..."
//	replicas   = 3      # default of buckets without tags, unless the policy document sets one
//	strict     = false  # likewise its diversity
//	repair { per_server_per_hour = 30  interval = "5m"  health_interval = "5s"  lost_after = "10m" }
//	consul { address = "127.0.0.1:8500"  prefix = "harvest/" }
//	node "client-1" {
//	  endpoint = "127.0.0.1:9000"  access_key = "..."  secret_key = "..."
//	  tenant = "search/frontend"  environment = "search"  rack = "rack-1"
//	  capacity_mb = 10240  # unless the tenant declares storage_mb
//	}
type Config struct {
	LogLevel  string        `hcl:"log_level,optional"`
	Listen    string        `hcl:"listen"`
	Admin     string        `hcl:"admin_listen,optional"`
	AccessKey string        `hcl:"access_key"`
	SecretKey string        `hcl:"secret_key"`
	Region    string        `hcl:"region,optional"`
	Replicas  int           `hcl:"replicas,optional"`
	Strict    bool          `hcl:"strict,optional"`
	Consul    ConsulConfig  `hcl:"consul,block"`
	Repair    *RepairConfig `hcl:"repair,block"`
	Nodes     []NodeConfig  `hcl:"node,block"`

	repair front.RepairOptions
	health struct{ interval, lostAfter time.Duration }
}

// RepairConfig tunes health checks and re-replication.
type RepairConfig struct {
	PerServerPerHour float64 `hcl:"per_server_per_hour,optional"`
	Interval         string  `hcl:"interval,optional"`
	HealthInterval   string  `hcl:"health_interval,optional"`
	LostAfter        string  `hcl:"lost_after,optional"`
}

// ConsulConfig says where Harvest's state is.
type ConsulConfig struct {
	Address string `hcl:"address"`
	Prefix  string `hcl:"prefix,optional"`
}

// NodeConfig is one storage node.
type NodeConfig struct {
	ID          string `hcl:"id,label"`
	Endpoint    string `hcl:"endpoint"`
	AccessKey   string `hcl:"access_key"`
	SecretKey   string `hcl:"secret_key"`
	Tenant      string `hcl:"tenant"`
	Environment string `hcl:"environment"`
	Rack        string `hcl:"rack,optional"`
	CapacityMB  int64  `hcl:"capacity_mb"`
}

// LoadConfig reads and checks an HCL file.
func LoadConfig(path string) (Config, error) {
	var c Config
	if err := hclsimple.DecodeFile(path, nil, &c); err != nil {
		return c, err
	}
	if c.Replicas == 0 {
		c.Replicas = 3
	}
	if c.Consul.Prefix == "" {
		c.Consul.Prefix = history.DefaultPrefix
	}
	if len(c.Nodes) < c.Replicas {
		return c, fmt.Errorf("%d storage nodes configured, fewer than replicas = %d", len(c.Nodes), c.Replicas)
	}
	c.health.interval, c.health.lostAfter = 5*time.Second, 10*time.Minute
	if r := c.Repair; r != nil {
		c.repair.PerServerPerHour = r.PerServerPerHour
		for _, d := range []struct {
			name, value string
			into        *time.Duration
		}{{"interval", r.Interval, &c.repair.Interval}, {"health_interval", r.HealthInterval, &c.health.interval},
			{"lost_after", r.LostAfter, &c.health.lostAfter}} {
			if d.value == "" {
				continue
			}
			v, err := time.ParseDuration(d.value)
			if err != nil || v <= 0 {
				return c, fmt.Errorf("%s: repair.%s = %q: want a positive duration like \"30s\"", path, d.name, d.value)
			}
			*d.into = v
		}
	}
	return c, nil
}

// Run serves until ctx ends: it reads the declarations (the tenants'
// declared storage, the policy document's default replication) and checks
// every node's identity marker before serving, then keeps checking,
// repairing and following busy flags and declarations.
func Run(ctx context.Context, c Config, log hclog.Logger) error {
	be, reg, err := open(ctx, c, log)
	if err != nil {
		return err
	}
	be.RefreshDeclarations(ctx)                 // before any request: capacities and defaults as declared
	be.CheckNodes(ctx, reg, c.health.lostAfter) // the first health check, before any request
	go be.FollowDeclarations(ctx, front.DeclarationsInterval)
	go be.Watch(ctx, reg, c.health.interval, c.health.lostAfter)
	go be.Repair(ctx)
	go be.FollowBusy(ctx, 2*time.Second)
	if c.Admin != "" {
		stop, err := serveAdmin(c.Admin, be, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	st := be.Status()
	log.Info("serving S3", "listen", c.Listen, "admin", c.Admin, "nodes", len(c.Nodes), "replicas", st.Replicas,
		"replicas_from", st.ReplicasFrom)
	return embedgw.RunVersityGW(ctx, be, &embedgw.Config{
		RootUserAccess: c.AccessKey, RootUserSecret: c.SecretKey, Region: c.Region, Ports: []string{c.Listen},
		MaxConnections: 250000, MaxRequests: 100000, MultipartMaxParts: 10000, Quiet: true,
	})
}

// Rebuild recreates the catalogue from the storage nodes alone.
func Rebuild(ctx context.Context, c Config, log hclog.Logger) (front.RebuildReport, error) {
	be, _, err := open(ctx, c, log)
	if err != nil {
		return front.RebuildReport{}, err
	}
	return be.Rebuild(ctx)
}

// open registers the configured nodes (keeping the identity markers the
// registry already holds) and builds the backend over them.
func open(ctx context.Context, c Config, log hclog.Logger) (*front.Backend, *nodes.Registry, error) {
	client, err := consulapi.NewClient(&consulapi.Config{Address: c.Consul.Address})
	if err != nil {
		return nil, nil, err
	}
	kv := history.NewConsulKV(client)
	reg := nodes.NewRegistry(kv, c.Consul.Prefix)
	known, err := reg.List(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the node registry: %w", err)
	}
	registered := map[string]nodes.Node{}
	for _, n := range known {
		registered[n.ID] = n
	}
	var cfgs []front.NodeConfig
	for _, n := range c.Nodes {
		// the configuration says where a node is; the registry keeps when it
		// joined and its identity marker
		node := nodes.Node{ID: n.ID, Tenant: n.Tenant, Environment: n.Environment, Rack: n.Rack, Endpoint: n.Endpoint,
			Capacity: n.CapacityMB << 20, Joined: registered[n.ID].Joined, Marker: registered[n.ID].Marker}
		if node.Joined.IsZero() {
			node.Joined = time.Now().UTC()
		}
		if err := reg.Register(ctx, node); err != nil {
			return nil, nil, err
		}
		cfgs = append(cfgs, front.NodeConfig{Node: node, AccessKey: n.AccessKey, SecretKey: n.SecretKey})
	}
	stats := tenantStats(ctx, history.NewStore(kv, c.Consul.Prefix), c.Nodes, log)
	ns, err := front.Connect(cfgs, stats)
	if err != nil {
		return nil, nil, err
	}
	be := front.New(front.Options{KV: kv, Prefix: c.Consul.Prefix, Nodes: ns, Replicas: c.Replicas, Strict: c.Strict,
		Log: log.Named("front"), Seed: uint64(time.Now().UnixNano()), Repair: c.repair})
	return be, reg, nil
}

// tenantStats reads each tenant's reimage rate (per server per month over
// its history) and peak CPU (95th percentile of its last 30 days).
func tenantStats(ctx context.Context, store *history.Store, cfgs []NodeConfig, log hclog.Logger) map[string]nodes.TenantStats {
	servers := map[string]int{}
	for _, n := range cfgs {
		servers[n.Tenant]++
	}
	out := map[string]nodes.TenantStats{}
	now := time.Now().UTC()
	for tenant, count := range servers {
		id, err := history.ParseTenantID(tenant)
		if err != nil {
			continue
		}
		reimages, err1 := store.Reimages(ctx, id)
		series, err2 := store.Series(ctx, id, now.Add(-30*24*time.Hour), now)
		if err1 != nil || err2 != nil || series.Observed() == 0 {
			log.Info("no history for tenant; placing it as the worst case", "tenant", tenant)
			continue
		}
		out[tenant] = nodes.TenantStats{ReimageRate: nodes.RecentReimageRate(reimages, count, now),
			PeakCPU: nodes.PeakCPU(series.Values)}
	}
	return out
}
