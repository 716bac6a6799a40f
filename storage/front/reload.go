package front

import (
	"slices"

	"github.com/harvest-platform/harvest/storage/nodes"
)

// SetNodes brings the node list in line with a reloaded configuration
// (harvest-blob on SIGHUP, when Nomad's template re-renders the list from
// the harvest-storage service) without a restart. A new node starts down
// until its health check (the maintainer gives it a marker if it has none).
// A node whose endpoint, keys, tenant, environment, rack or capacity
// changed keeps its marker and what it holds; a new endpoint is checked
// again before use. A node no longer listed is not dropped: the
// catalogue still names its replicas, so it stays down, and once down for
// lost_after the maintainer re-creates its replicas elsewhere, as for a
// node that stopped answering; listed again, it comes back with its
// marker. stats are the tenants' reimage rates and peaks for the grid.
func (b *Backend) SetNodes(cfgs []nodes.Config, stats map[string]nodes.TenantStats) (nodes.Changes, error) {
	ch, err := b.nodes.Reconfigure(cfgs, stats)
	if err != nil {
		return ch, err
	}
	for _, id := range slices.Concat(ch.Added, ch.Changed, ch.Removed) {
		b.objects.MarkInGrid(id)
	}
	b.objects.Regrid()
	return ch, nil
}
