package health

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/diskfree"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// MarkerObject is the identity marker, an object a node gets when it
// joins; a reimage wipes the disk and with it the marker (and every
// replica). The front mirrors the bucket records beside it
// (.harvest/buckets/) so the catalogue can be rebuilt from the nodes.
const MarkerObject = ".harvest/identity"

// CheckNodes checks every node's identity marker once, all nodes at once:
// a node that answers with its marker is up; one that does not answer is
// down (reads and placement skip it) and, after lostAfter, lost; one that
// answers without its marker was reimaged; one that answers with another
// node's marker is misconfigured (down, nothing forgotten). A lost or
// reimaged node's replicas are dropped from the catalogue, which the
// repairer then restores, unless safe mode holds that back (safemode.go);
// only then does a reimaged node get a new marker and rejoin. Up nodes'
// free disk is read every diskEvery. Each check ends by sharing this
// front's ledger (ledger.go).
func (h *Checker) CheckNodes(ctx context.Context, reg *nodes.Registry, lostAfter time.Duration) {
	list := h.nodes.List()
	probes := make([]probe, len(list))
	var wg sync.WaitGroup
	for i, node := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			probes[i] = h.probe(ctx, node)
		}()
	}
	wg.Wait()
	var gone, back []string
	for i, node := range list {
		switch v := h.verdict(node, probes[i], lostAfter); v {
		case looksReimaged, looksLost:
			gone = append(gone, node.ID)
		case upNow:
			back = append(back, node.ID)
		}
	}
	wasSafe := h.safe.reason() != ""
	forget := h.safe.judge(gone, back, len(list), time.Now())
	if why := h.safe.reason(); why != "" {
		h.metrics.SafeMode.Set(1)
		if !wasSafe {
			h.log.Error("SAFE MODE: holding back forgetting replicas, repairs and garbage collection", "reason", why)
		}
	} else {
		h.metrics.SafeMode.Set(0)
		if wasSafe {
			h.log.Warn("safe mode off", "confirmed_or_nodes_back", true)
		}
	}
	for i, node := range list {
		h.settle(ctx, reg, node, probes[i], lostAfter, forget)
	}
	h.ShareLedger(ctx)
}

// Watch runs CheckNodes every interval until ctx ends (the first check is
// the caller's, before it serves).
func (h *Checker) Watch(ctx context.Context, reg *nodes.Registry, interval, lostAfter time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		h.CheckNodes(ctx, reg, lostAfter)
	}
}

// errRemoved is the health check's answer for a node the configuration no
// longer lists: it is down, and lost once down for lost_after, like a node
// whose allocation is gone (the maintainer then re-creates its replicas).
var errRemoved = errors.New("removed from the configuration")

// diskEvery is how often an up node's free disk is read.
const diskEvery = 15 * time.Second

// probe is one node's answer to a health check.
type probe struct {
	marker string
	found  bool
	err    error
}

func (h *Checker) probe(ctx context.Context, node nodes.Node) probe {
	var p probe
	if h.nodes.Removed(node.ID) {
		p.err = errRemoved
		return p
	}
	p.err = h.nodes.Call(ctx, node.ID, func(ctx context.Context) (err error) {
		p.marker, p.found, err = readMarker(ctx, h.nodes.Client(node.ID))
		return err
	})
	if p.err == nil && h.nodes.DiskDue(node.ID, diskEvery) {
		h.readDisk(ctx, node.ID)
	}
	return p
}

// readDisk records a node's free disk (unknown when it cannot be read:
// then only the capacity bounds the node).
func (h *Checker) readDisk(ctx context.Context, id string) {
	var free int64
	err := h.nodes.Call(ctx, id, func(ctx context.Context) (err error) {
		access, secret := h.nodes.Credentials(id)
		free, err = diskfree.Read(ctx, h.diskClient, h.nodes.Client(id).EndpointURL().String(), access, secret)
		return err
	})
	if err != nil {
		free = -1
		if h.nodes.NoteDiskError(id) {
			h.log.Warn("cannot read a storage node's free disk; only its capacity bounds it", "node", id, "error", err)
		}
	}
	h.nodes.SetDiskFree(id, free)
	h.metrics.NodeFree.WithLabelValues(id).Set(float64(free))
}

type verdict int

const (
	upNow verdict = iota
	downNow
	looksLost
	looksReimaged
	misconfigured
	joining
)

// verdict classifies a probe.
func (h *Checker) verdict(node nodes.Node, p probe, lostAfter time.Duration) verdict {
	switch {
	case p.err != nil:
		if h.nodes.DownFor(node.ID) >= lostAfter && !h.lostNodes[node.ID] {
			return looksLost
		}
		return downNow
	case p.found && !strings.HasPrefix(p.marker, node.ID+"/"):
		return misconfigured
	case p.found && (node.Marker == "" || p.marker == node.Marker):
		return upNow
	case node.Marker == "":
		return joining
	default:
		return looksReimaged
	}
}

// settle acts on a node's verdict.
func (h *Checker) settle(ctx context.Context, reg *nodes.Registry, node nodes.Node, p probe, lostAfter time.Duration, forget bool) {
	lost := h.lostNodes
	switch h.verdict(node, p, lostAfter) {
	case downNow, looksLost:
		wasUp := h.nodes.Up(node.ID)
		down := h.markDown(node.ID)
		if wasUp {
			h.log.Warn("storage node down", "node", node.ID, "error", p.err)
		}
		if down >= lostAfter && !lost[node.ID] && ctx.Err() == nil && forget && h.upkeep.Maintainer() {
			h.log.Error("storage node lost: down too long; re-creating its replicas elsewhere", "node", node.ID, "down", down)
			if h.forgetNode(ctx, node.ID) == nil {
				lost[node.ID] = true
				h.metrics.Lost.Inc()
			}
		}
		return
	case misconfigured:
		if h.nodes.Up(node.ID) || !h.nodes.WasMisconfigured(node.ID) {
			h.log.Error("storage node's endpoint serves another node's data (its identity marker names another node); "+
				"kept down, nothing forgotten: fix its endpoint", "node", node.ID, "marker", p.marker)
		}
		h.markDown(node.ID)
		return
	case looksReimaged:
		if !h.upkeep.Maintainer() && h.upkeep.AdoptMarker(ctx, reg, node.ID, p.marker) {
			break // the maintainer re-marked it: up again
		}
		if !forget || !h.upkeep.Maintainer() {
			h.markDown(node.ID)
			return
		}
		h.log.Error("storage node reimaged: identity marker gone; re-creating its replicas elsewhere", "node", node.ID)
		if err := h.forgetNode(ctx, node.ID); err != nil {
			return // the marker stays missing: the next check tries again
		}
		h.metrics.Lost.Inc()
		fallthrough
	case joining:
		if !h.upkeep.Maintainer() { // the maintainer gives it its marker
			h.markDown(node.ID)
			return
		}
		marker, err := h.join(ctx, reg, node)
		if err != nil {
			h.log.Warn("storage node could not join", "node", node.ID, "error", err)
			return
		}
		p.marker = marker
	case upNow:
		if node.Marker == "" && !h.upkeep.Maintainer() {
			h.nodes.SetMarker(node.ID, p.marker) // the maintainer registers it
		} else if node.Marker == "" {
			node.Marker = p.marker
			if err := reg.Register(ctx, node); err != nil {
				return
			}
			h.nodes.SetMarker(node.ID, p.marker)
		}
	}
	delete(lost, node.ID)
	h.nodes.ClearMisconfigured(node.ID)
	if !h.nodes.Up(node.ID) {
		h.log.Info("storage node up", "node", node.ID, "marker", p.marker)
	}
	h.nodes.SetUp(node.ID, true)
	h.objects.MarkInGrid(node.ID)
	h.metrics.NodeUp.WithLabelValues(node.ID).Set(1)
}

// markDown takes a node out of reads and placement and returns how long it
// has been down.
func (h *Checker) markDown(id string) time.Duration {
	down := h.nodes.SetUp(id, false)
	h.objects.MarkInGrid(id)
	h.metrics.NodeUp.WithLabelValues(id).Set(0)
	return down
}

func readMarker(ctx context.Context, c *minio.Core) (string, bool, error) {
	body, _, _, err := c.GetObject(ctx, nodes.DataBucket, MarkerObject, minio.GetObjectOptions{})
	if err != nil {
		switch minio.ToErrorResponse(err).Code {
		case "NoSuchBucket", "NoSuchKey":
			return "", false, nil
		}
		return "", false, err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 256))
	return string(data), err == nil, err
}

// join gives an empty node its data bucket, the bucket records and a new
// identity marker, and registers the marker.
func (h *Checker) join(ctx context.Context, reg *nodes.Registry, node nodes.Node) (string, error) {
	c := h.nodes.Client(node.ID)
	ctx, cancel := context.WithTimeout(ctx, 4*h.timeouts.Node)
	defer cancel()
	if err := c.MakeBucket(ctx, nodes.DataBucket, minio.MakeBucketOptions{}); err != nil {
		if code := minio.ToErrorResponse(err).Code; code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return "", err
		}
	}
	if err := h.front.MirrorBuckets(ctx, c); err != nil {
		return "", err
	}
	var token [16]byte
	_, _ = crand.Read(token[:])
	marker := node.ID + "/" + hex.EncodeToString(token[:])
	if err := nodes.PutSmall(ctx, c, MarkerObject, []byte(marker)); err != nil {
		return "", err
	}
	node.Marker, node.Joined = marker, time.Now().UTC()
	if err := reg.Register(ctx, node); err != nil {
		return "", err
	}
	h.nodes.SetMarker(node.ID, marker)
	h.log.Info("storage node joined", "node", node.ID, "marker", marker)
	return marker, nil
}

// forgetNode drops a node's replicas from every catalogue entry.
func (h *Checker) forgetNode(ctx context.Context, id string) error {
	entries, err := h.front.Entries(ctx)
	if err != nil {
		h.log.Warn("forgetting a node's replicas: listing the catalogue failed", "node", id, "error", err)
		return err
	}
	dropped := 0
	for _, e := range entries {
		if !e.HasReplicaOn(id) {
			continue
		}
		_, err := h.cat.Update(ctx, e.Bucket, e.Key, func(cur *catalog.Entry) error {
			if cur.HasReplicaOn(id) {
				h.nodes.Orphan(id, cur.Size)
			}
			cur.Replicas = cur.WithoutNode(id)
			return nil
		})
		if err != nil && err != catalog.ErrNotFound {
			h.log.Warn("forgetting a replica failed", "node", id, "bucket", e.Bucket, "key", e.Key, "error", err)
			return err
		}
		dropped++
	}
	h.log.Info("replicas of a lost node dropped from the catalogue", "node", id, "replicas", dropped)
	h.upkeep.KickRepair()
	return nil
}
