package nodes

import (
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Changes says what Reconfigure changed.
type Changes struct{ Added, Changed, Removed []string }

// Empty reports whether nothing changed.
func (c Changes) Empty() bool { return len(c.Added)+len(c.Changed)+len(c.Removed) == 0 }

// Reconfigure brings the pool in line with a reloaded configuration (see
// front.Backend.SetNodes): a new node starts down; a node whose endpoint or
// keys changed gets a new client and is down until its next health check;
// one whose tenant, environment, rack or capacity changed keeps its marker
// and what it holds; one no longer listed stays, down and Removed, until
// listed again. stats replace the tenants' reimage rates and peaks.
func (p *Pool) Reconfigure(cfgs []Config, stats map[string]TenantStats) (Changes, error) {
	var ch Changes
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
	p.mu.Lock()
	defer p.mu.Unlock()
	// a client only for a node that is new or reached differently (no I/O:
	// minio.NewCore only checks the endpoint)
	endpoint := map[string]string{}
	for _, node := range p.list {
		endpoint[node.ID] = node.Endpoint
	}
	clients := map[string]*minio.Core{}
	for _, c := range cfgs {
		if e, known := endpoint[c.ID]; known && e == c.Endpoint && p.creds[c.ID] == [2]string{c.AccessKey, c.SecretKey} {
			continue // the same test as "same" below: its client stays
		}
		core, err := minio.NewCore(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
			Transport: Transport(p.timeouts.Node), MaxRetries: 1})
		if err != nil {
			return ch, fmt.Errorf("node %s: %w", c.ID, err)
		}
		clients[c.ID] = core
	}
	if p.removed == nil {
		p.removed = map[string]bool{}
	}
	at := map[string]int{}
	for i, node := range p.list {
		at[node.ID] = i
	}
	for _, c := range cfgs {
		i, known := at[c.ID]
		if !known {
			node := c.Node
			node.Marker = "" // the registry's, learnt at its health check
			p.list = append(p.list, node)
			p.clients[c.ID], p.creds[c.ID] = clients[c.ID], [2]string{c.AccessKey, c.SecretKey}
			p.since[c.ID], p.up[c.ID] = time.Now(), false
			p.capacity[c.ID], p.capacityFrom[c.ID] = c.Capacity, FromConfig
			p.slots[c.ID] = make(chan struct{}, p.perNode)
			ch.Added = append(ch.Added, c.ID)
			continue
		}
		old := p.list[i]
		wasRemoved := p.removed[c.ID]
		delete(p.removed, c.ID)
		same := old.Endpoint == c.Endpoint && p.creds[c.ID] == [2]string{c.AccessKey, c.SecretKey}
		if same && !wasRemoved && old.Tenant == c.Tenant && old.Environment == c.Environment && old.Rack == c.Rack && old.Capacity == c.Capacity {
			continue
		}
		node := c.Node
		node.Marker, node.Joined = old.Marker, old.Joined
		p.list[i] = node
		if !same {
			p.clients[c.ID], p.creds[c.ID] = clients[c.ID], [2]string{c.AccessKey, c.SecretKey}
			if p.up[c.ID] {
				p.since[c.ID] = time.Now()
			}
			p.up[c.ID] = false // the next health check says whether the new endpoint is the node
		}
		if p.capacityFrom[c.ID] == FromConfig {
			p.capacity[c.ID] = c.Capacity
		}
		ch.Changed = append(ch.Changed, c.ID)
	}
	for _, node := range p.list {
		if !listed[node.ID] && !p.removed[node.ID] {
			p.removed[node.ID] = true
			if p.up[node.ID] || p.since[node.ID].IsZero() {
				p.since[node.ID] = time.Now()
			}
			p.up[node.ID] = false
			ch.Removed = append(ch.Removed, node.ID)
		}
	}
	p.stats = stats
	return ch, nil
}

// Removed reports whether the configuration no longer lists a node.
func (p *Pool) Removed(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.removed[id]
}
