package front

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

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

// Nodes are the storage nodes with their S3 clients, bytes held and busy
// flags (published by each node's harvest driver).
type Nodes struct {
	mu      sync.RWMutex
	list    []nodes.Node
	clients map[string]*minio.Core
	used    map[string]int64
	busy    map[string]bool
	stats   map[string]nodes.TenantStats
}

// Connect opens a client to every node and makes sure it has the data
// bucket. stats are the tenants' reimage rates and peaks (from history).
func Connect(ctx context.Context, cfgs []NodeConfig, stats map[string]nodes.TenantStats) (*Nodes, error) {
	n := &Nodes{clients: map[string]*minio.Core{}, used: map[string]int64{}, busy: map[string]bool{}, stats: stats}
	for _, c := range cfgs {
		if err := c.Node.Validate(); err != nil {
			return nil, err
		}
		core, err := minio.NewCore(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")})
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", c.ID, err)
		}
		if err := core.MakeBucket(ctx, DataBucket, minio.MakeBucketOptions{}); err != nil {
			if exists, errExists := core.BucketExists(ctx, DataBucket); errExists != nil || !exists {
				return nil, fmt.Errorf("node %s: data bucket: %w", c.ID, err)
			}
		}
		n.clients[c.ID] = core
		n.list = append(n.list, c.Node)
	}
	return n, nil
}

// Grid builds Algorithm 2's grid over the nodes as they are now.
func (n *Nodes) Grid() *grid.Grid {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return grid.Build(nodes.GridTenants(n.list, n.stats, n.used, n.busy))
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
