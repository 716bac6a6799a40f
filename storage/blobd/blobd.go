// Package blobd runs harvest-blob: it registers the configured storage
// nodes, learns their tenants' reimage rates and peaks from the tenant
// history, follows the nodes' busy flags, and serves S3 through versitygw
// with the storage/front backend.
package blobd

import (
	"context"
	"fmt"
	"net/http"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/go-hclog"
	"github.com/versity/versitygw/embedgw"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/front"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// Run serves until ctx ends: it reads the declarations (the tenants'
// declared storage, the policy document's default replication) and checks
// every node's identity marker before serving, then keeps checking,
// repairing and following busy flags and declarations.
func Run(ctx context.Context, c Config, log hclog.Logger, reloads <-chan Config) error {
	be, reg, store, err := open(ctx, c, log)
	if err != nil {
		return err
	}
	lockClient, err := consulClient(c, maintainerWait+2*c.timeouts.Consul, maintainerWait)
	if err != nil {
		return err
	}
	// the first try for the maintainer lock ends before the first health
	// check, so a lone front (or the first of several) gives new nodes
	// their markers before it serves
	maintaining := holdMaintainerLock(ctx, lockClient, c, be.Upkeep(), log.Named("maintainer"))
	be.RefreshDeclarations(ctx) // before any request: capacities and defaults as declared
	<-maintaining
	be.Health().CheckNodes(ctx, reg, c.health.lostAfter) // the first health check, before any request
	if err := be.Objects().RecountUploads(ctx); err != nil {
		return fmt.Errorf("reading the open multipart uploads: %w", err)
	}
	go followReloads(ctx, reloads, c, be, reg, store, log)
	go be.FollowDeclarations(ctx, front.DeclarationsInterval)
	go be.Health().Watch(ctx, reg, c.health.interval, c.health.lostAfter)
	go be.Upkeep().Repair(ctx)
	go be.FollowBusy(ctx, 2*time.Second)
	go be.Upkeep().CollectGarbage(ctx)
	go be.Upkeep().Scrub(ctx)
	if c.Admin != "" {
		stop, err := serveAdmin(&c, be, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	st := be.Status()
	log.Info("serving S3", "listen", c.Listen, "admin", c.Admin, "nodes", len(c.Nodes), "replicas", st.Replicas,
		"replicas_from", st.ReplicasFrom)
	gw := &embedgw.Config{
		RootUserAccess: c.AccessKey, RootUserSecret: c.SecretKey, Region: c.Region, Ports: []string{c.Listen},
		MaxConnections: c.limits.MaxConnections, MaxRequests: c.limits.MaxRequests, MultipartMaxParts: 10000, Quiet: true,
	}
	if c.TLS != nil { // HTTPS only (security.go)
		gw.CertFile, gw.KeyFile = c.TLS.CertFile, c.TLS.KeyFile
	}
	return embedgw.RunVersityGW(ctx, be, gw)
}

// Rebuild recreates the catalogue from the storage nodes alone.
func Rebuild(ctx context.Context, c Config, log hclog.Logger) (upkeep.RebuildReport, error) {
	be, _, _, err := open(ctx, c, log)
	if err != nil {
		return upkeep.RebuildReport{}, err
	}
	return be.Upkeep().Rebuild(ctx)
}

// open registers the configured nodes (keeping the identity markers the
// registry already holds) and builds the backend over them.
func open(ctx context.Context, c Config, log hclog.Logger) (*front.Backend, *nodes.Registry, kv.KV, error) {
	// every Consul call has the consul timeout; the HTTP client's own
	// timeout is a backstop should a call escape it
	client, err := consulClient(c, 2*c.timeouts.Consul, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	store := kv.WithDeadline(kv.NewConsul(client), c.timeouts.Consul)
	reg := nodes.NewRegistry(store, c.Consul.KVPrefix())
	known, err := reg.List(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading the node registry: %w", err)
	}
	cfgs, err := registerNodes(ctx, reg, known, c.Nodes)
	if err != nil {
		return nil, nil, nil, err
	}
	stats := tenantStats(ctx, history.NewStore(store, c.Consul.KVPrefix()), c.Nodes, c.placement.BusyPercent, log)
	ns, err := nodes.Connect(cfgs, stats, nodes.PoolOptions{Timeouts: c.timeouts, PerNode: c.limits.PerNode, MinFreeMB: c.minFreeMB,
		HourCandidates: c.placement.HourCandidates, SteerFirst: c.placement.SteerFirst, PickJointly: c.placement.PickJointly})
	if err != nil {
		return nil, nil, nil, err
	}
	be := front.New(front.Options{KV: store, Prefix: c.Consul.KVPrefix(), Nodes: ns, Replicas: c.Replicas, Strict: c.Strict,
		Log: log.Named("front"), Seed: uint64(time.Now().UnixNano()), Repair: c.repair, GC: c.gc, Scrub: c.scrub,
		SafeMode: c.safeMode, BusyExpiry: c.busyExpiry})
	return be, reg, store, nil
}

// registerNodes registers the configured nodes: the configuration says
// where a node is, the registry (known) keeps when it joined and its
// identity marker.
func registerNodes(ctx context.Context, reg *nodes.Registry, known []nodes.Node, configured []NodeConfig) ([]nodes.Config, error) {
	registered := map[string]nodes.Node{}
	for _, n := range known {
		registered[n.ID] = n
	}
	var cfgs []nodes.Config
	for _, n := range configured {
		node := nodes.Node{ID: n.ID, Tenant: n.Tenant, Environment: n.Environment, Rack: n.Rack, Endpoint: n.Endpoint,
			Capacity: n.CapacityMB << 20, Joined: registered[n.ID].Joined, Marker: registered[n.ID].Marker}
		if node.Joined.IsZero() {
			node.Joined = time.Now().UTC()
		}
		if err := reg.Register(ctx, node); err != nil {
			return nil, err
		}
		cfgs = append(cfgs, nodes.Config{Node: node, AccessKey: n.AccessKey, SecretKey: n.SecretKey})
	}
	return cfgs, nil
}

// consulClient is a client of the configured Consul (CONSUL_* first, the
// consul block over them: token, TLS) whose calls give up after timeout;
// wait, when set, is how long its blocking queries wait by default.
func consulClient(c Config, timeout, wait time.Duration) (*consulapi.Client, error) {
	cc := c.Consul.APIConfig()
	tlsConfig, err := consulapi.SetupTLSConfig(&cc.TLSConfig)
	if err != nil {
		return nil, fmt.Errorf("consul tls: %w", err)
	}
	transport := cleanhttp.DefaultPooledTransport()
	transport.TLSClientConfig = tlsConfig
	cc.HttpClient = &http.Client{Timeout: timeout, Transport: transport}
	cc.WaitTime = wait
	return consulapi.NewClient(cc)
}

// tenantStats reads each tenant's reimage rate (per server per month over
// its history), peak CPU (95th percentile of its last 30 days) and the
// share of each hour of the day it was at or above busyPercent.
func tenantStats(ctx context.Context, store *history.Store, cfgs []NodeConfig, busyPercent float64, log hclog.Logger) map[string]nodes.TenantStats {
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
			PeakCPU: nodes.PeakCPU(series.Values), BusyHours: nodes.BusyHours(series.Values, series.Start, busyPercent)}
	}
	return out
}
