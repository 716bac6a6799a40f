package front

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// The identity marker is an object a node gets when it joins; a reimage
// wipes the disk and with it the marker (and every replica). Bucket records
// are mirrored beside it so the catalogue can be rebuilt from the nodes.
const (
	markerObject = ".harvest/identity"
	bucketPrefix = ".harvest/buckets/"
)

// CheckNodes checks every node's identity marker once: a node that answers
// with its marker is up; one that does not answer is down (reads and
// placement skip it) and, after lostAfter, lost; one that answers without
// its marker was reimaged. A lost or reimaged node's replicas are dropped
// from the catalogue, which the repairer then restores; only then does the
// node get a new marker and rejoin.
func (b *Backend) CheckNodes(ctx context.Context, reg *nodes.Registry, lostAfter time.Duration) {
	for _, node := range b.nodes.List() {
		b.checkNode(ctx, reg, node, lostAfter)
	}
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

func (b *Backend) checkNode(ctx context.Context, reg *nodes.Registry, node nodes.Node, lostAfter time.Duration) {
	lost := b.lostNodes
	c := b.nodes.client(node.ID)
	probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	marker, found, err := readMarker(probeCtx, c)
	if err != nil {
		wasUp := b.nodes.Up(node.ID)
		down := b.nodes.setUp(node.ID, false)
		b.markInGrid(node.ID)
		b.metrics.nodeUp.WithLabelValues(node.ID).Set(0)
		if wasUp {
			b.log.Warn("storage node down", "node", node.ID, "error", err)
		}
		if down >= lostAfter && !lost[node.ID] && ctx.Err() == nil {
			b.log.Error("storage node lost: down too long; re-creating its replicas elsewhere", "node", node.ID, "down", down)
			if b.forgetNode(ctx, node.ID) == nil {
				lost[node.ID] = true
				b.metrics.lost.Inc()
			}
		}
		return
	}
	if !found || (node.Marker != "" && marker != node.Marker) {
		if node.Marker != "" {
			b.log.Error("storage node reimaged: identity marker gone; re-creating its replicas elsewhere", "node", node.ID)
			if err := b.forgetNode(ctx, node.ID); err != nil {
				return // the marker stays missing: the next check tries again
			}
			b.metrics.lost.Inc()
		}
		if marker, err = b.join(ctx, reg, node); err != nil {
			b.log.Warn("storage node could not join", "node", node.ID, "error", err)
			return
		}
	} else if node.Marker == "" {
		node.Marker = marker
		if err := reg.Register(ctx, node); err != nil {
			return
		}
		b.nodes.setMarker(node.ID, marker)
	}
	delete(lost, node.ID)
	if !b.nodes.Up(node.ID) {
		b.log.Info("storage node up", "node", node.ID, "marker", marker)
	}
	b.nodes.setUp(node.ID, true)
	b.markInGrid(node.ID)
	b.metrics.nodeUp.WithLabelValues(node.ID).Set(1)
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
	c := b.nodes.client(node.ID)
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
	b.nodes.setMarker(node.ID, marker)
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
	b.repair.kick()
	return nil
}

// markInGrid keeps a node's standing in the grid: busy or down nodes take
// no new replicas.
func (b *Backend) markInGrid(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, ok := b.grid.Node(id); ok {
		n.Busy = b.nodes.Busy(id) || !b.nodes.Up(id)
	}
}
