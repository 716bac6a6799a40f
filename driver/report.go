package driver

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/nodereport"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/connect"
	"github.com/harvest-platform/harvest/kv"
)

// consulStore is Harvest's store in the Consul at consul_address (nil when
// none is set), shared by the reports and the declared reserve.
func consulStore(cfg Config) (*history.Store, error) {
	if cfg.ConsulAddress == "" {
		return nil, nil
	}
	client, err := connect.Consul{Address: cfg.ConsulAddress, Token: cfg.ConsulToken, TokenFile: cfg.ConsulTokenFile,
		CAFile: cfg.ConsulCAFile, CertFile: cfg.ConsulCertFile, KeyFile: cfg.ConsulKeyFile, TLSServerName: cfg.ConsulTLSServerName}.Client()
	if err != nil {
		return nil, err
	}
	return history.NewStore(kv.NewConsul(client), cfg.ConsulPrefix), nil
}

// newReporter returns nil (reporting off) unless tenant, node_name and a
// Consul store are set.
func newReporter(ctx context.Context, cfg Config, capacity guard.Resources, store *history.Store, log hclog.Logger) *nodereport.Reporter {
	if cfg.Tenant == "" || store == nil || cfg.NodeName == "" {
		log.Info("node samples and busy flag off: set tenant, node_name and consul_address to enable")
		return nil
	}
	id, err := history.ParseTenantID(cfg.Tenant)
	if err != nil {
		log.Error("node samples off", "error", err)
		return nil
	}
	threshold, follow := cfg.BusyThreshold, cfg.BusyThreshold <= 0
	if follow {
		reserve, _ := guard.ParseAmount(or(cfg.ReserveCPU, guard.DefaultReserveCPU), capacity.CPU)
		threshold = nodereport.ReserveEdge(capacity.CPU, reserve)
	}
	return nodereport.Start(ctx, nodereport.Options{Store: store, Tenant: id, Node: cfg.NodeName, Capacity: capacity,
		Threshold: threshold, FollowReserve: follow, Log: log})
}
