package blobd

import (
	"context"
	"reflect"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/front"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// followReloads applies each reloaded configuration's node list (harvest-blob
// reads its file again on SIGHUP; Nomad's template sends one when the
// harvest-storage service changes): new nodes are registered and checked,
// changed ones re-checked, and nodes no longer listed are kept down until
// the maintainer re-creates their replicas (front.Backend.SetNodes). Every
// other setting takes effect at the next start.
func followReloads(ctx context.Context, reloads <-chan Config, running Config, be *front.Backend, reg *nodes.Registry, store kv.KV, log hclog.Logger) {
	for {
		var c Config
		select {
		case <-ctx.Done():
			return
		case c = <-reloads:
		}
		known, err := reg.List(ctx)
		if err != nil {
			log.Error("reload: reading the node registry; node list unchanged", "error", err)
			continue
		}
		cfgs, err := registerNodes(ctx, reg, known, c.Nodes)
		if err != nil {
			log.Error("reload: registering the nodes; node list unchanged", "error", err)
			continue
		}
		stats := tenantStats(ctx, history.NewStore(store, c.Consul.KVPrefix()), c.Nodes, c.placement.BusyPercent, log)
		ch, err := be.SetNodes(cfgs, stats)
		if err != nil {
			log.Error("reload: node list unchanged", "error", err)
			continue
		}
		log.Info("reloaded the node list", "nodes", len(cfgs), "added", ch.Added, "changed", ch.Changed, "removed", ch.Removed)
		if otherSettingsDiffer(running, c) {
			log.Warn("reload: settings other than the node list changed; they take effect when harvest-blob restarts")
		}
	}
}

// otherSettingsDiffer reports whether two configurations differ in anything
// but their node lists.
func otherSettingsDiffer(a, b Config) bool {
	a.Nodes, b.Nodes = nil, nil
	return !reflect.DeepEqual(a, b)
}
