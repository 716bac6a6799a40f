package front

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// DataBucket is the bucket every storage node keeps replicas in.
const DataBucket = "harvest-data"

// NodeConfig is one storage node the front writes to.
type NodeConfig struct {
	nodes.Node
	AccessKey, SecretKey string
}

// Nodes are the storage nodes with their S3 clients, bytes held, busy
// flags (published by each node's harvest driver) and effective capacity.
// list keeps each node as configured and registered (Capacity: the
// front's capacity_mb); capacity is what placement and /v1/status use: the
// storage the node's tenant declares, else the configured one
// (declared.go keeps it current).
type Nodes struct {
	mu           sync.RWMutex
	list         []nodes.Node
	clients      map[string]*minio.Core
	used         map[string]int64
	capacity     map[string]int64  // effective capacity in bytes, by node
	capacityFrom map[string]string // fromTenant or fromConfig, by node
	busy         map[string]bool
	stats        map[string]nodes.TenantStats
	up           map[string]bool
	since        map[string]time.Time // when a node went down
	reads        sync.Map             // node ID -> *atomic.Int64: reads in flight
}

func (n *Nodes) counter(id string) *atomic.Int64 {
	c, _ := n.reads.LoadOrStore(id, new(atomic.Int64))
	return c.(*atomic.Int64)
}

func (n *Nodes) inflight(id string) int64 { return n.counter(id).Load() }

// startRead counts a read in flight on a node until the returned func runs.
func (n *Nodes) startRead(id string) func() {
	c := n.counter(id)
	c.Add(1)
	return func() { c.Add(-1) }
}

// Connect opens a client to every node. Nodes start down: the health
// check (Backend.Watch) brings them up once their identity marker is
// checked. stats are the tenants' reimage rates and peaks (from history).
func Connect(cfgs []NodeConfig, stats map[string]nodes.TenantStats) (*Nodes, error) {
	n := &Nodes{clients: map[string]*minio.Core{}, used: map[string]int64{}, busy: map[string]bool{}, stats: stats,
		up: map[string]bool{}, since: map[string]time.Time{}, capacity: map[string]int64{}, capacityFrom: map[string]string{}}
	for _, c := range cfgs {
		if err := c.Node.Validate(); err != nil {
			return nil, err
		}
		core, err := minio.NewCore(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
			Transport: nodeTransport()})
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", c.ID, err)
		}
		n.clients[c.ID] = core
		n.list = append(n.list, c.Node)
		n.since[c.ID] = time.Now()
		n.capacity[c.ID], n.capacityFrom[c.ID] = c.Capacity, fromConfig
	}
	return n, nil
}

// List returns the nodes as registered (Capacity: the configured one, not
// the effective one Grid and Status use).
func (n *Nodes) List() []nodes.Node {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return append([]nodes.Node(nil), n.list...)
}

// Up reports whether a node answered its last health check with its marker.
func (n *Nodes) Up(id string) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.up[id]
}

// setUp records a health check's result; it returns how long the node has
// been down (zero when up).
func (n *Nodes) setUp(id string, up bool) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if up {
		n.up[id] = true
		delete(n.since, id)
		return 0
	}
	if n.up[id] || n.since[id].IsZero() {
		n.since[id] = time.Now()
	}
	n.up[id] = false
	return time.Since(n.since[id])
}

func (n *Nodes) setMarker(id, marker string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range n.list {
		if n.list[i].ID == id {
			n.list[i].Marker = marker
		}
	}
}

func (n *Nodes) setUsed(used map[string]int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.used = used
}

// Grid builds Algorithm 2's grid over the nodes as they are now, each with
// its effective capacity.
func (n *Nodes) Grid() *grid.Grid {
	n.mu.RLock()
	defer n.mu.RUnlock()
	busy := map[string]bool{} // down nodes take no replicas either
	list := make([]nodes.Node, len(n.list))
	for i, node := range n.list {
		busy[node.ID] = n.busy[node.ID] || !n.up[node.ID]
		node.Capacity = n.capacity[node.ID]
		list[i] = node
	}
	return grid.Build(nodes.GridTenants(list, n.stats, n.used, busy))
}

// capacityChange is one node's new effective capacity.
type capacityChange struct {
	node     string
	from, to int64 // bytes
	source   string
	used     int64 // bytes the node holds
}

// setDeclaredStorage sets each node's effective capacity: declared[tenant]
// (bytes) when its tenant declares storage, else the configured capacity.
// It returns the nodes whose capacity or its source changed.
func (n *Nodes) setDeclaredStorage(declared map[string]int64) []capacityChange {
	n.mu.Lock()
	defer n.mu.Unlock()
	var changed []capacityChange
	for _, node := range n.list {
		c, src := node.Capacity, fromConfig
		if d, ok := declared[node.Tenant]; ok {
			c, src = d, fromTenant
		}
		if c != n.capacity[node.ID] || src != n.capacityFrom[node.ID] {
			changed = append(changed, capacityChange{node: node.ID, from: n.capacity[node.ID], to: c, source: src, used: n.used[node.ID]})
			n.capacity[node.ID], n.capacityFrom[node.ID] = c, src
		}
	}
	return changed
}

func (n *Nodes) client(id string) *minio.Core {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.clients[id]
}

// Busy reports a node's busy flag.
func (n *Nodes) Busy(id string) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.busy[id]
}

func (n *Nodes) addUsed(id string, delta int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.used[id] += delta
}

// busyFlag is the part of the driver's flag the front reads.
type busyFlag struct {
	Busy bool `json:"busy"`
}

// RefreshBusy reads every node's busy flag from Consul KV and returns the
// nodes whose flag changed.
func (n *Nodes) RefreshBusy(ctx context.Context, kv history.KV, prefix string) ([]string, error) {
	pairs, err := kv.List(ctx, prefix+"busy/")
	if err != nil {
		return nil, err
	}
	now := map[string]bool{}
	for _, p := range pairs {
		var f busyFlag
		if json.Unmarshal(p.Value, &f) == nil {
			now[p.Key[len(prefix+"busy/"):]] = f.Busy
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var changed []string
	for _, node := range n.list {
		if now[node.ID] != n.busy[node.ID] {
			n.busy[node.ID] = now[node.ID]
			changed = append(changed, node.ID)
		}
	}
	return changed, nil
}

// nodeTransport bounds how long a dead node can hold a request.
func nodeTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	t.MaxIdleConnsPerHost = 64
	t.ReadBufferSize, t.WriteBufferSize = 256<<10, 256<<10
	t.DisableCompression = true
	return t
}
