package nodes

import (
	"bytes"
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

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/storage/grid"
)

// Where a node's effective capacity comes from, as the front's log and
// /v1/status say it.
const (
	FromTenant = string(declare.FromTenant) // its tenant's declared storage_mb
	FromConfig = "config"                   // the front's capacity_mb
)

// Config is one storage node the front writes to: its registration and the
// keys of its S3 API.
type Config struct {
	Node
	AccessKey, SecretKey string
}

// Pool is the live set of storage nodes the front writes to, with their S3
// clients, bytes held (space.go), busy flags (published by each node's
// harvest driver), effective capacity and a limit on the calls in flight
// to each (limits.go). list keeps each node as configured and registered
// (Capacity: the front's capacity_mb); capacity is what placement and
// /v1/status use: the storage the node's tenant declares, else the
// configured one (the front keeps it current with SetDeclaredStorage).
type Pool struct {
	mu           sync.Mutex
	list         []Node
	clients      map[string]*minio.Core
	creds        map[string][2]string
	capacity     map[string]int64  // effective capacity in bytes, by node
	capacityFrom map[string]string // FromTenant or FromConfig, by node
	space        map[string]*space
	minFree      int64
	busy         map[string]bool
	stats        map[string]TenantStats
	up           map[string]bool
	since        map[string]time.Time // when a node went down
	slots        map[string]chan struct{}
	diskRead     map[string]time.Time
	flags        map[string]bool                                 // things logged once per episode
	removed      map[string]bool                                 // no longer configured (reload.go)
	perNode      int                                             // call slots of each node
	hourCands    int                                             // the grid's HourCandidates
	steerFirst   bool                                            // the grid's SteerFirst
	pickJointly  bool                                            // the grid's PickJointly
	reads        sync.Map                                        // node ID -> *readStats (readchoice.go)
	firstByte    atomic.Pointer[func(node string, secs float64)] // the front's metric of each node's time to first byte
	timeouts     Timeouts
	// shared with the other fronts (ledger.go): what this front committed,
	// by node and ledger slot; what the others hold on each node beyond this
	// front's own count; and when the catalogue scan behind that count began
	added     map[string]map[int64]int64
	others    map[string]int64
	countedAt time.Time
}

// PoolOptions tune the node clients.
type PoolOptions struct {
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

// Connect opens a client to every node. Nodes start down: the front's
// health check (front.Backend.Watch) brings them up once their identity
// marker is checked. stats are the tenants' reimage rates and peaks (from
// history).
func Connect(cfgs []Config, stats map[string]TenantStats, opts ...PoolOptions) (*Pool, error) {
	var o PoolOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Timeouts = o.Timeouts.withDefaults()
	if o.PerNode <= 0 {
		o.PerNode = 64
	}
	p := &Pool{clients: map[string]*minio.Core{}, creds: map[string][2]string{}, busy: map[string]bool{}, stats: stats,
		up: map[string]bool{}, since: map[string]time.Time{}, capacity: map[string]int64{}, capacityFrom: map[string]string{},
		space: map[string]*space{}, slots: map[string]chan struct{}{}, diskRead: map[string]time.Time{}, flags: map[string]bool{}, minFree: saturatingMB(o.MinFreeMB), timeouts: o.Timeouts, perNode: o.PerNode, hourCands: o.HourCandidates, steerFirst: o.SteerFirst, pickJointly: o.PickJointly}
	for _, c := range cfgs {
		if err := c.Node.Validate(); err != nil {
			return nil, err
		}
		core, err := minio.NewCore(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
			Transport: Transport(o.Timeouts.Node), MaxRetries: 1})
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", c.ID, err)
		}
		p.clients[c.ID] = core
		p.creds[c.ID] = [2]string{c.AccessKey, c.SecretKey}
		p.list = append(p.list, c.Node)
		p.since[c.ID] = time.Now()
		p.capacity[c.ID], p.capacityFrom[c.ID] = c.Capacity, FromConfig
		p.slots[c.ID] = make(chan struct{}, o.PerNode)
	}
	return p, nil
}

// Timeouts are the pool's timeouts, defaults filled in.
func (p *Pool) Timeouts() Timeouts { return p.timeouts }

// List returns the nodes as registered (Capacity: the configured one, not
// the effective one Grid and Snapshot use).
func (p *Pool) List() []Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Node(nil), p.list...)
}

// Up reports whether a node answered its last health check with its marker.
func (p *Pool) Up(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.up[id]
}

// SetUp records a health check's result; it returns how long the node has
// been down (zero when up).
func (p *Pool) SetUp(id string, up bool) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up {
		p.up[id] = true
		delete(p.since, id)
		return 0
	}
	if p.up[id] || p.since[id].IsZero() {
		p.since[id] = time.Now()
	}
	p.up[id] = false
	return time.Since(p.since[id])
}

// SetMarker records the identity marker a node holds.
func (p *Pool) SetMarker(id, marker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.list {
		if p.list[i].ID == id {
			p.list[i].Marker = marker
		}
	}
}

// Grid builds Algorithm 2's grid over the nodes as they are now, each with
// its room (space.go) as its free space.
func (p *Pool) Grid() *grid.Grid {
	p.mu.Lock()
	defer p.mu.Unlock()
	busy := map[string]bool{} // down nodes take no replicas either
	list := make([]Node, len(p.list))
	held := map[string]int64{}
	for i, node := range p.list {
		busy[node.ID] = p.busy[node.ID] || !p.up[node.ID]
		node.Capacity = p.room(node.ID)
		list[i] = node
	}
	g := grid.Build(GridTenants(list, p.stats, held, busy))
	g.HourCandidates, g.SteerFirst, g.PickJointly = p.hourCands, p.steerFirst, p.pickJointly
	return g
}

// SyncFree sets every node's free space in g to its room now.
func (p *Pool) SyncFree(g *grid.Grid) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, node := range p.list {
		if gn, ok := g.Node(node.ID); ok {
			gn.Free = p.room(node.ID)
			gn.Busy = p.busy[node.ID] || !p.up[node.ID]
		}
	}
}

// SetStats replaces the tenants' reimage rates and peaks the next Grid
// uses.
func (p *Pool) SetStats(stats map[string]TenantStats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats = stats
}

// CapacityChange is one node's new effective capacity.
type CapacityChange struct {
	Node     string
	From, To int64 // bytes
	Source   string
	Used     int64 // bytes the node holds
}

// SetDeclaredStorage sets each node's effective capacity: declared[tenant]
// (bytes) when its tenant declares storage, else the configured capacity.
// It returns the nodes whose capacity or its source changed.
func (p *Pool) SetDeclaredStorage(declared map[string]int64) []CapacityChange {
	p.mu.Lock()
	defer p.mu.Unlock()
	var changed []CapacityChange
	for _, node := range p.list {
		c, src := node.Capacity, FromConfig
		if d, ok := declared[node.Tenant]; ok {
			c, src = d, FromTenant
		}
		if c != p.capacity[node.ID] || src != p.capacityFrom[node.ID] {
			changed = append(changed, CapacityChange{Node: node.ID, From: p.capacity[node.ID], To: c, Source: src, Used: p.used(node.ID)})
			p.capacity[node.ID], p.capacityFrom[node.ID] = c, src
		}
	}
	return changed
}

// Client is a node's S3 client.
func (p *Pool) Client(id string) *minio.Core {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients[id]
}

// PutSmall writes a small object to a node's data bucket through its
// client c: an identity marker, a mirrored bucket record.
func PutSmall(ctx context.Context, c *minio.Core, name string, data []byte) error {
	_, err := c.PutObject(ctx, DataBucket, name, bytes.NewReader(data), int64(len(data)), "", "", minio.PutObjectOptions{})
	return err
}

// Busy reports a node's busy flag.
func (p *Pool) Busy(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy[id]
}

// SetBusy sets a node's busy flag until RefreshBusy reads the flags again.
func (p *Pool) SetBusy(id string, busy bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy[id] = busy
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
func (p *Pool) RefreshBusy(ctx context.Context, kv history.KV, prefix string, expiry time.Duration) ([]string, error) {
	pairs, err := kv.List(ctx, prefix+contract.BusyDir)
	if err != nil {
		return nil, err
	}
	now := map[string]bool{}
	at := time.Now()
	for _, pair := range pairs {
		now[pair.Key[len(prefix+contract.BusyDir):]] = parseBusy(pair.Value, at, expiry)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var changed []string
	for _, node := range p.list {
		if now[node.ID] != p.busy[node.ID] {
			p.busy[node.ID] = now[node.ID]
			changed = append(changed, node.ID)
		}
	}
	return changed, nil
}

// Transport bounds how long a dead or stopped node can hold a call:
// connecting, and waiting for an answer's headers, each within timeout.
func Transport(timeout time.Duration) *http.Transport {
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

// DownFor is how long a node has been down (zero when up).
func (p *Pool) DownFor(id string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.up[id] || p.since[id].IsZero() {
		return 0
	}
	return time.Since(p.since[id])
}

// Credentials are a node's access and secret keys.
func (p *Pool) Credentials(id string) (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.creds[id]
	return c[0], c[1]
}

// DiskDue reports whether a node's free disk is due a reading, and marks
// it read.
func (p *Pool) DiskDue(id string, every time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.diskRead[id]) < every {
		return false
	}
	p.diskRead[id] = time.Now()
	return true
}

// NoteDiskError reports whether this is the first failed reading of a
// node's disk since one succeeded (to log it once).
func (p *Pool) NoteDiskError(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !p.flags[id+"\x00disk"]
	p.flags[id+"\x00disk"] = true
	return first
}

// WasMisconfigured marks a node misconfigured and reports whether it
// already was (to log it once per episode).
func (p *Pool) WasMisconfigured(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.flags[id+"\x00misconfigured"]
	p.flags[id+"\x00misconfigured"] = true
	return was
}

// ClearMisconfigured ends a node's episode of misconfiguration.
func (p *Pool) ClearMisconfigured(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.flags, id+"\x00misconfigured")
}

// State is one node as the front's /v1/status reports it.
type State struct {
	Node                   // as registered (Capacity: the configured one)
	Up, Busy, Removed bool // Removed: the configuration no longer lists it
	Used, Room        int64
	DiskFree          int64 // at the last reading; -1 unknown
	Capacity          int64 // effective, in bytes
	CapacityFrom      string
	Stats             TenantStats // its tenant's, as the grid has them
}

// Snapshot is every node's state, taken at once (by node as configured).
func (p *Pool) Snapshot() []State {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]State, 0, len(p.list))
	for _, n := range p.list {
		out = append(out, State{Node: n, Up: p.up[n.ID], Busy: p.busy[n.ID], Removed: p.removed[n.ID], Used: p.used(n.ID),
			Room: p.room(n.ID), DiskFree: p.spaceOf(n.ID).diskFree, Capacity: p.capacity[n.ID], CapacityFrom: p.capacityFrom[n.ID], Stats: p.stats[n.Tenant]})
	}
	return out
}
