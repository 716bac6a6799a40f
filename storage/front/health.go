package front

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/diskfree"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// The identity marker is an object a node gets when it joins; a reimage
// wipes the disk and with it the marker (and every replica). Bucket records
// are mirrored beside it so the catalogue can be rebuilt from the nodes.
const (
	markerObject = ".harvest/identity"
	bucketPrefix = ".harvest/buckets/"
)

// CheckNodes checks every node's identity marker once, all nodes at once:
// a node that answers with its marker is up; one that does not answer is
// down (reads and placement skip it) and, after lostAfter, lost; one that
// answers without its marker was reimaged; one that answers with another
// node's marker is misconfigured (down, nothing forgotten). A lost or
// reimaged node's replicas are dropped from the catalogue, which the
// repairer then restores, unless safe mode holds that back (safemode.go);
// only then does a reimaged node get a new marker and rejoin. Up nodes'
// free disk is read every diskEvery.
func (b *Backend) CheckNodes(ctx context.Context, reg *nodes.Registry, lostAfter time.Duration) {
	list := b.nodes.List()
	probes := make([]probe, len(list))
	var wg sync.WaitGroup
	for i, node := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			probes[i] = b.probe(ctx, node)
		}()
	}
	wg.Wait()
	var gone, back []string
	for i, node := range list {
		switch v := b.verdict(node, probes[i], lostAfter); v {
		case looksReimaged, looksLost:
			gone = append(gone, node.ID)
		case upNow:
			back = append(back, node.ID)
		}
	}
	wasSafe := b.safe.reason() != ""
	forget := b.safe.judge(gone, back, len(list), time.Now())
	if why := b.safe.reason(); why != "" {
		b.metrics.safeMode.Set(1)
		if !wasSafe {
			b.log.Error("SAFE MODE: holding back forgetting replicas, repairs and garbage collection", "reason", why)
		}
	} else {
		b.metrics.safeMode.Set(0)
		if wasSafe {
			b.log.Warn("safe mode off", "confirmed_or_nodes_back", true)
		}
	}
	for i, node := range list {
		b.settle(ctx, reg, node, probes[i], lostAfter, forget)
	}
	b.shareLedger(ctx)
}

// Watch runs CheckNodes every interval until ctx ends (the first check is
// the caller's, before it serves).
func (b *Backend) Watch(ctx context.Context, reg *nodes.Registry, interval, lostAfter time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		b.CheckNodes(ctx, reg, lostAfter)
	}
}

// diskEvery is how often an up node's free disk is read.
const diskEvery = 15 * time.Second

// probe is one node's answer to a health check.
type probe struct {
	marker string
	found  bool
	err    error
}

func (b *Backend) probe(ctx context.Context, node nodes.Node) probe {
	var p probe
	if b.nodes.Removed(node.ID) {
		p.err = errRemoved
		return p
	}
	p.err = b.nodes.Call(ctx, node.ID, func(ctx context.Context) (err error) {
		p.marker, p.found, err = readMarker(ctx, b.nodes.Client(node.ID))
		return err
	})
	if p.err == nil && b.nodes.DiskDue(node.ID, diskEvery) {
		b.readDisk(ctx, node.ID)
	}
	return p
}

// readDisk records a node's free disk (unknown when it cannot be read:
// then only the capacity bounds the node).
func (b *Backend) readDisk(ctx context.Context, id string) {
	var free int64
	err := b.nodes.Call(ctx, id, func(ctx context.Context) (err error) {
		access, secret := b.nodes.Credentials(id)
		free, err = diskfree.Read(ctx, b.diskClient, b.nodes.Client(id).EndpointURL().String(), access, secret)
		return err
	})
	if err != nil {
		free = -1
		if b.nodes.NoteDiskError(id) {
			b.log.Warn("cannot read a storage node's free disk; only its capacity bounds it", "node", id, "error", err)
		}
	}
	b.nodes.SetDiskFree(id, free)
	b.metrics.nodeFree.WithLabelValues(id).Set(float64(free))
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
func (b *Backend) verdict(node nodes.Node, p probe, lostAfter time.Duration) verdict {
	switch {
	case p.err != nil:
		if b.nodes.DownFor(node.ID) >= lostAfter && !b.lostNodes[node.ID] {
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
func (b *Backend) settle(ctx context.Context, reg *nodes.Registry, node nodes.Node, p probe, lostAfter time.Duration, forget bool) {
	lost := b.lostNodes
	switch b.verdict(node, p, lostAfter) {
	case downNow, looksLost:
		wasUp := b.nodes.Up(node.ID)
		down := b.markDown(node.ID)
		if wasUp {
			b.log.Warn("storage node down", "node", node.ID, "error", p.err)
		}
		if down >= lostAfter && !lost[node.ID] && ctx.Err() == nil && forget && b.upkeep.Maintainer() {
			b.log.Error("storage node lost: down too long; re-creating its replicas elsewhere", "node", node.ID, "down", down)
			if b.forgetNode(ctx, node.ID) == nil {
				lost[node.ID] = true
				b.metrics.lost.Inc()
			}
		}
		return
	case misconfigured:
		if b.nodes.Up(node.ID) || !b.nodes.WasMisconfigured(node.ID) {
			b.log.Error("storage node's endpoint serves another node's data (its identity marker names another node); "+
				"kept down, nothing forgotten: fix its endpoint", "node", node.ID, "marker", p.marker)
		}
		b.markDown(node.ID)
		return
	case looksReimaged:
		if !b.upkeep.Maintainer() && b.upkeep.AdoptMarker(ctx, reg, node.ID, p.marker) {
			break // the maintainer re-marked it: up again
		}
		if !forget || !b.upkeep.Maintainer() {
			b.markDown(node.ID)
			return
		}
		b.log.Error("storage node reimaged: identity marker gone; re-creating its replicas elsewhere", "node", node.ID)
		if err := b.forgetNode(ctx, node.ID); err != nil {
			return // the marker stays missing: the next check tries again
		}
		b.metrics.lost.Inc()
		fallthrough
	case joining:
		if !b.upkeep.Maintainer() { // the maintainer gives it its marker
			b.markDown(node.ID)
			return
		}
		marker, err := b.join(ctx, reg, node)
		if err != nil {
			b.log.Warn("storage node could not join", "node", node.ID, "error", err)
			return
		}
		p.marker = marker
	case upNow:
		if node.Marker == "" && !b.upkeep.Maintainer() {
			b.nodes.SetMarker(node.ID, p.marker) // the maintainer registers it
		} else if node.Marker == "" {
			node.Marker = p.marker
			if err := reg.Register(ctx, node); err != nil {
				return
			}
			b.nodes.SetMarker(node.ID, p.marker)
		}
	}
	delete(lost, node.ID)
	b.nodes.ClearMisconfigured(node.ID)
	if !b.nodes.Up(node.ID) {
		b.log.Info("storage node up", "node", node.ID, "marker", p.marker)
	}
	b.nodes.SetUp(node.ID, true)
	b.objects.MarkInGrid(node.ID)
	b.metrics.nodeUp.WithLabelValues(node.ID).Set(1)
}

// markDown takes a node out of reads and placement and returns how long it
// has been down.
func (b *Backend) markDown(id string) time.Duration {
	down := b.nodes.SetUp(id, false)
	b.objects.MarkInGrid(id)
	b.metrics.nodeUp.WithLabelValues(id).Set(0)
	return down
}

func readMarker(ctx context.Context, c *minio.Core) (string, bool, error) {
	body, _, _, err := c.GetObject(ctx, DataBucket, markerObject, minio.GetObjectOptions{})
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
func (b *Backend) join(ctx context.Context, reg *nodes.Registry, node nodes.Node) (string, error) {
	c := b.nodes.Client(node.ID)
	ctx, cancel := context.WithTimeout(ctx, 4*b.timeouts.Node)
	defer cancel()
	if err := c.MakeBucket(ctx, DataBucket, minio.MakeBucketOptions{}); err != nil {
		if code := minio.ToErrorResponse(err).Code; code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return "", err
		}
	}
	pairs, err := b.kv.List(ctx, b.prefix+"blob/buckets/")
	if err != nil {
		return "", err
	}
	for _, p := range pairs {
		var info bucketInfo
		if json.Unmarshal(p.Value, &info) == nil {
			if err := putSmall(ctx, c, bucketPrefix+info.Name, p.Value); err != nil {
				return "", err
			}
		}
	}
	var token [16]byte
	_, _ = randRead(token[:])
	marker := node.ID + "/" + hex.EncodeToString(token[:])
	if err := putSmall(ctx, c, markerObject, []byte(marker)); err != nil {
		return "", err
	}
	node.Marker, node.Joined = marker, time.Now().UTC()
	if err := reg.Register(ctx, node); err != nil {
		return "", err
	}
	b.nodes.SetMarker(node.ID, marker)
	b.log.Info("storage node joined", "node", node.ID, "marker", marker)
	return marker, nil
}

func putSmall(ctx context.Context, c *minio.Core, name string, data []byte) error {
	_, err := c.PutObject(ctx, DataBucket, name, bytes.NewReader(data), int64(len(data)), "", "", minio.PutObjectOptions{})
	return err
}

// forgetNode drops a node's replicas from every catalogue entry.
func (b *Backend) forgetNode(ctx context.Context, id string) error {
	entries, _, err := b.allEntries(ctx)
	if err != nil {
		b.log.Warn("forgetting a node's replicas: listing the catalogue failed", "node", id, "error", err)
		return err
	}
	dropped := 0
	for _, e := range entries {
		if !e.HasReplicaOn(id) {
			continue
		}
		_, err := b.cat.Update(ctx, e.Bucket, e.Key, func(cur *catalog.Entry) error {
			if cur.HasReplicaOn(id) {
				b.nodes.Orphan(id, cur.Size)
			}
			cur.Replicas = cur.WithoutNode(id)
			return nil
		})
		if err != nil && err != catalog.ErrNotFound {
			b.log.Warn("forgetting a replica failed", "node", id, "bucket", e.Bucket, "key", e.Key, "error", err)
			return err
		}
		dropped++
	}
	b.log.Info("replicas of a lost node dropped from the catalogue", "node", id, "replicas", dropped)
	b.upkeep.KickRepair()
	return nil
}
