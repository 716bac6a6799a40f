package front

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/storage/nodes"
)

// errRemoved is the health check's answer for a node the configuration no
// longer lists: it is down, and lost once down for lost_after, like a node
// whose allocation is gone (the maintainer then re-creates its replicas).
var errRemoved = errors.New("removed from the configuration")

// NodeChanges says what SetNodes changed.
type NodeChanges struct{ Added, Changed, Removed []string }

// Empty reports whether nothing changed.
func (c NodeChanges) Empty() bool { return len(c.Added)+len(c.Changed)+len(c.Removed) == 0 }

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
func (b *Backend) SetNodes(cfgs []NodeConfig, stats map[string]nodes.TenantStats) (NodeChanges, error) {
	ch, err := b.nodes.set(cfgs, stats)
	if err != nil {
		return ch, err
	}
	for _, id := range slices.Concat(ch.Added, ch.Changed, ch.Removed) {
		b.markInGrid(id)
	}
	b.regrid()
	return ch, nil
}

func (n *Nodes) set(cfgs []NodeConfig, stats map[string]nodes.TenantStats) (NodeChanges, error) {
	var ch NodeChanges
	listed := map[string]bool{}
	for _, c := range cfgs {
		if err := c.Node.Validate(); err != nil {
			return ch, err
		}
		if listed[c.ID] {
			return ch, fmt.Errorf("node %s listed twice", c.ID)
		}
		listed[c.ID] = true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	// a client only for a node that is new or reached differently (no I/O:
	// minio.NewCore only checks the endpoint)
	endpoint := map[string]string{}
	for _, node := range n.list {
		endpoint[node.ID] = node.Endpoint
	}
	clients := map[string]*minio.Core{}
	for _, c := range cfgs {
		if e, known := endpoint[c.ID]; known && e == c.Endpoint && n.creds[c.ID] == [2]string{c.AccessKey, c.SecretKey} {
			continue // the same test as "same" below: its client stays
		}
		core, err := minio.NewCore(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
			Transport: nodeTransport(n.timeouts.Node), MaxRetries: 1})
		if err != nil {
			return ch, fmt.Errorf("node %s: %w", c.ID, err)
		}
		clients[c.ID] = core
	}
	if n.removed == nil {
		n.removed = map[string]bool{}
	}
	at := map[string]int{}
	for i, node := range n.list {
		at[node.ID] = i
	}
	for _, c := range cfgs {
		i, known := at[c.ID]
		if !known {
			node := c.Node
			node.Marker = "" // the registry's, learnt at its health check
			n.list = append(n.list, node)
			n.clients[c.ID], n.creds[c.ID] = clients[c.ID], [2]string{c.AccessKey, c.SecretKey}
			n.since[c.ID], n.up[c.ID] = time.Now(), false
			n.capacity[c.ID], n.capacityFrom[c.ID] = c.Capacity, fromConfig
			n.slots[c.ID] = make(chan struct{}, n.perNode)
			ch.Added = append(ch.Added, c.ID)
			continue
		}
		old := n.list[i]
		wasRemoved := n.removed[c.ID]
		delete(n.removed, c.ID)
		same := old.Endpoint == c.Endpoint && n.creds[c.ID] == [2]string{c.AccessKey, c.SecretKey}
		if same && !wasRemoved && old.Tenant == c.Tenant && old.Environment == c.Environment && old.Rack == c.Rack && old.Capacity == c.Capacity {
			continue
		}
		node := c.Node
		node.Marker, node.Joined = old.Marker, old.Joined
		n.list[i] = node
		if !same {
			n.clients[c.ID], n.creds[c.ID] = clients[c.ID], [2]string{c.AccessKey, c.SecretKey}
			if n.up[c.ID] {
				n.since[c.ID] = time.Now()
			}
			n.up[c.ID] = false // the next health check says whether the new endpoint is the node
		}
		if n.capacityFrom[c.ID] == fromConfig {
			n.capacity[c.ID] = c.Capacity
		}
		ch.Changed = append(ch.Changed, c.ID)
	}
	for _, node := range n.list {
		if !listed[node.ID] && !n.removed[node.ID] {
			n.removed[node.ID] = true
			if n.up[node.ID] || n.since[node.ID].IsZero() {
				n.since[node.ID] = time.Now()
			}
			n.up[node.ID] = false
			ch.Removed = append(ch.Removed, node.ID)
		}
	}
	n.stats = stats
	return ch, nil
}

// isRemoved reports whether the configuration no longer lists a node.
func (n *Nodes) isRemoved(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.removed[id]
}
