package front

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/contract"
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

// Nodes are the storage nodes with their S3 clients, bytes held (space.go),
// busy flags (published by each node's harvest driver), effective capacity
// and a limit on the calls in flight to each. list keeps each node as
// configured and registered (Capacity: the front's capacity_mb); capacity
// is what placement and /v1/status use: the storage the node's tenant
// declares, else the configured one (declared.go keeps it current).
type Nodes struct {
	mu           sync.Mutex
	list         []nodes.Node
	clients      map[string]*minio.Core
	creds        map[string][2]string
	capacity     map[string]int64  // effective capacity in bytes, by node
	capacityFrom map[string]string // fromTenant or fromConfig, by node
	space        map[string]*space
	minFree      int64
	busy         map[string]bool
	stats        map[string]nodes.TenantStats
	up           map[string]bool
	since        map[string]time.Time // when a node went down
	slots        map[string]chan struct{}
	diskRead     map[string]time.Time
	flags        map[string]bool                     // things logged once per episode
	removed      map[string]bool                     // no longer configured (reload.go)
	perNode      int                                 // call slots of each node
	hourCands    int                                 // the grid's HourCandidates
	steerFirst   bool                                // the grid's SteerFirst
	pickJointly  bool                                // the grid's PickJointly
	reads        sync.Map                            // node ID -> *readStats (readchoice.go)
	firstByte    atomic.Pointer[prometheus.GaugeVec] // the front's metric of each node's time to first byte
	timeouts     Timeouts
	// shared with the other fronts (ledger.go): what this front committed,
	// by node and ledger slot; what the others hold on each node beyond this
	// front's own count; and when the catalogue scan behind that count began
	added     map[string]map[int64]int64
	others    map[string]int64
	countedAt time.Time
}

// NodesOptions tune the node clients.
type NodesOptions struct {
	Timeouts Timeouts
	// PerNode caps the calls in flight to one node (default 64); a call
	// waits for a slot at most Timeouts.Queue.
	PerNode int
	// MinFreeMB is the disk a node keeps free whatever its capacity.
	MinFreeMB int64
	// HourCandidates is the grid's (grid.Grid.HourCandidates): 0 or 1 is
	// Algorithm 2's random pick.
	HourCandidates int
	// SteerFirst is the grid's (grid.Grid.SteerFirst): the candidates choose
	// an object's first replica too.
	SteerFirst bool
	// PickJointly is the grid's (grid.Grid.PickJointly): the candidates
	// of an object's rows are chosen together.
	PickJointly bool
}

// Connect opens a client to every node. Nodes start down: the health
// check (Backend.Watch) brings them up once their identity marker is
// checked. stats are the tenants' reimage rates and peaks (from history).
func Connect(cfgs []NodeConfig, stats map[string]nodes.TenantStats, opts ...NodesOptions) (*Nodes, error) {
	var o NodesOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Timeouts = o.Timeouts.withDefaults()
	if o.PerNode <= 0 {
		o.PerNode = 64
	}
	n := &Nodes{clients: map[string]*minio.Core{}, creds: map[string][2]string{}, busy: map[string]bool{}, stats: stats,
		up: map[string]bool{}, since: map[string]time.Time{}, capacity: map[string]int64{}, capacityFrom: map[string]string{},
		space: map[string]*space{}, slots: map[string]chan struct{}{}, diskRead: map[string]time.Time{}, flags: map[string]bool{}, minFree: saturatingMB(o.MinFreeMB), timeouts: o.Timeouts, perNode: o.PerNode, hourCands: o.HourCandidates, steerFirst: o.SteerFirst, pickJointly: o.PickJointly}
	for _, c := range cfgs {
		if err := c.Node.Validate(); err != nil {
			return nil, err
		}
		core, err := minio.NewCore(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
			Transport: nodeTransport(o.Timeouts.Node), MaxRetries: 1})
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", c.ID, err)
		}
		n.clients[c.ID] = core
		n.creds[c.ID] = [2]string{c.AccessKey, c.SecretKey}
		n.list = append(n.list, c.Node)
		n.since[c.ID] = time.Now()
		n.capacity[c.ID], n.capacityFrom[c.ID] = c.Capacity, fromConfig
		n.slots[c.ID] = make(chan struct{}, o.PerNode)
	}
	return n, nil
}

// List returns the nodes as registered (Capacity: the configured one, not
// the effective one Grid and Status use).
func (n *Nodes) List() []nodes.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]nodes.Node(nil), n.list...)
}

// Up reports whether a node answered its last health check with its marker.
func (n *Nodes) Up(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
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

// Grid builds Algorithm 2's grid over the nodes as they are now, each with
// its room (space.go) as its free space.
func (n *Nodes) Grid() *grid.Grid {
	n.mu.Lock()
	defer n.mu.Unlock()
	busy := map[string]bool{} // down nodes take no replicas either
	list := make([]nodes.Node, len(n.list))
	held := map[string]int64{}
	for i, node := range n.list {
		busy[node.ID] = n.busy[node.ID] || !n.up[node.ID]
		node.Capacity = n.room(node.ID)
		list[i] = node
	}
	g := grid.Build(nodes.GridTenants(list, n.stats, held, busy))
	g.HourCandidates, g.SteerFirst, g.PickJointly = n.hourCands, n.steerFirst, n.pickJointly
	return g
}

// syncFree sets every node's free space in g to its room now.
func (n *Nodes) syncFree(g *grid.Grid) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, node := range n.list {
		if gn, ok := g.Node(node.ID); ok {
			gn.Free = n.room(node.ID)
			gn.Busy = n.busy[node.ID] || !n.up[node.ID]
		}
	}
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
			changed = append(changed, capacityChange{node: node.ID, from: n.capacity[node.ID], to: c, source: src, used: n.used(node.ID)})
			n.capacity[node.ID], n.capacityFrom[node.ID] = c, src
		}
	}
	return changed
}

func (n *Nodes) client(id string) *minio.Core {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.clients[id]
}

// Busy reports a node's busy flag.
func (n *Nodes) Busy(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.busy[id]
}

// parseBusy reads a busy flag: busy only when it says so and was written
// within expiry of now (a driver that stopped writing leaves a stale flag;
// a flag without a time is stale).
func parseBusy(data []byte, now time.Time, expiry time.Duration) bool {
	var f contract.BusyFlag
	if json.Unmarshal(data, &f) != nil || !f.Busy || f.Updated.IsZero() {
		return false
	}
	return now.Sub(f.Updated) <= expiry
}

// RefreshBusy reads every node's busy flag from Consul KV and returns the
// nodes whose standing changed; a flag older than expiry counts as not busy.
func (n *Nodes) RefreshBusy(ctx context.Context, kv history.KV, prefix string, expiry time.Duration) ([]string, error) {
	pairs, err := kv.List(ctx, prefix+contract.BusyDir)
	if err != nil {
		return nil, err
	}
	now := map[string]bool{}
	at := time.Now()
	for _, p := range pairs {
		now[p.Key[len(prefix+contract.BusyDir):]] = parseBusy(p.Value, at, expiry)
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

// nodeTransport bounds how long a dead or stopped node can hold a call:
// connecting, and waiting for an answer's headers, each within timeout.
func nodeTransport(timeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = timeout
	t.TLSHandshakeTimeout = timeout
	t.ExpectContinueTimeout = time.Second
	t.MaxIdleConnsPerHost = 64
	t.ReadBufferSize, t.WriteBufferSize = 256<<10, 256<<10
	t.DisableCompression = true
	return t
}

// downFor is how long a node has been down (zero when up).
func (n *Nodes) downFor(id string) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.up[id] || n.since[id].IsZero() {
		return 0
	}
	return time.Since(n.since[id])
}

// credentials are a node's access and secret keys.
func (n *Nodes) credentials(id string) (string, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.creds[id]
	return c[0], c[1]
}

// diskDue reports whether a node's free disk is due a reading, and marks
// it read.
func (n *Nodes) diskDue(id string, every time.Duration) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if time.Since(n.diskRead[id]) < every {
		return false
	}
	n.diskRead[id] = time.Now()
	return true
}

// noteDiskError reports whether this is the first failed reading of a
// node's disk since one succeeded (to log it once).
func (n *Nodes) noteDiskError(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	first := !n.flags[id+"\x00disk"]
	n.flags[id+"\x00disk"] = true
	return first
}

func (n *Nodes) wasMisconfigured(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	was := n.flags[id+"\x00misconfigured"]
	n.flags[id+"\x00misconfigured"] = true
	return was
}

func (n *Nodes) clearMisconfigured(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.flags, id+"\x00misconfigured")
}
