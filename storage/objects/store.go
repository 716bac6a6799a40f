package objects

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/grid"
	"github.com/harvest-platform/harvest/storage/integrity"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// replicaName is a new, unique name on the nodes for one version of an
// object, so that an overwrite never touches a replica a reader may use.
// Names start with the deployment's own folder (namePrefix): the garbage
// collector only ever looks there.
func (w *Writer) replicaName(bucket, key string) string {
	sum := sha256.Sum256([]byte(bucket + "/" + key))
	var nonce [8]byte
	_, _ = randRead(nonce[:])
	return w.namePrefix + hex.EncodeToString(sum[:16]) + "/" + hex.EncodeToString(nonce[:])
}

// ReplicaFolder is the folder of a deployment's replicas on the nodes
// (prefix: its Consul KV prefix, e.g. "harvest/").
func ReplicaFolder(prefix string) string { return namePrefixFor(history.KeyPrefix(prefix)) }

// namePrefixFor is the folder of a deployment's replicas on the nodes: one
// per Consul prefix, so fronts of two deployments never collect each
// other's replicas.
func namePrefixFor(prefix string) string {
	sum := sha256.Sum256([]byte(prefix))
	return "o/" + hex.EncodeToString(sum[:4]) + "/"
}

// Store writes a new object (or version) of e.Size bytes from body to
// nodes placed by Algorithm 2 under pol and records it in the catalogue:
// the written entry. recorded (may be nil) gives the client's checksum
// once the body is read. A write refused before its body was read is
// ErrRefused (the caller may drain the body).
func (w *Writer) Store(ctx context.Context, e catalog.Entry, body io.Reader, pol Policy, recorded func() *catalog.Checksum) (catalog.Entry, error) {
	place, err := w.Place(e, e.Size, pol, nil)
	if err != nil {
		return e, refused{err}
	}
	e.LastModified = time.Now().UTC().Truncate(time.Second)
	e.Degraded, e.Version = place.Degraded, newVersion()
	name := w.replicaName(e.Bucket, e.Key)
	res, err := w.putReplicas(ctx, place.Nodes, name, body, e)
	if err != nil {
		w.nodes.Unreserve(place.Nodes, e.Size)
		return e, err
	}
	e.ETag = `"` + hex.EncodeToString(res.md5) + `"`
	e.Layout = integrity.Layout{res.segment}
	if recorded != nil {
		e.Checksum = recorded()
	}
	for _, n := range place.Nodes {
		e.Replicas = append(e.Replicas, catalog.Replica{Node: n, Name: name})
	}
	if err := w.commit(ctx, e, e.Size); err != nil {
		return e, err
	}
	w.wrote(e, place)
	return e, nil
}

// Place picks nodes for size bytes by Algorithm 2 (around existing
// replicas' nodes) and reserves the bytes on them until the write ends
// (nodes.Pool.Unreserve or Commit). A full tier is XMinioStorageFull.
func (w *Writer) Place(e catalog.Entry, size int64, pol Policy, existing []string) (grid.Placement, error) {
	replicas := pol.Replicas - len(existing)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nodes.SyncFree(w.grid)
	place, err := w.grid.Place(grid.Request{Size: size, Replicas: replicas, Strict: pol.Strict, Existing: existing}, w.rng)
	if err == nil && !w.nodes.Reserve(place.Nodes, size) {
		err = grid.ErrNoSpace
	}
	switch {
	case errors.Is(err, grid.ErrNoSpace):
		w.metrics.StorageFull.Inc()
		w.log.Warn("no room for a write: storage full", "bucket", e.Bucket, "key", e.Key, "bytes", size, "replicas", replicas, "error", err)
		return place, errStorageFull(replicas, size)
	case errors.Is(err, grid.ErrNotDiverse):
		w.log.Warn("no placement keeps every diversity rule (strict)", "bucket", e.Bucket, "key", e.Key, "error", err)
		return place, s3err.APIError{Code: "ServiceUnavailable", HTTPStatusCode: 503,
			Description: "The bucket's strict diversity cannot be kept with the storage nodes available now. Retry later."}
	case err != nil:
		return place, err
	}
	return place, nil
}

// Regrid rebuilds Algorithm 2's grid from the nodes' bytes held and
// effective capacities (the grid's cells split the free space in thirds).
func (w *Writer) Regrid() {
	g := w.nodes.Grid()
	w.mu.Lock()
	w.grid = g
	w.mu.Unlock()
}

// ErrRefused marks a write refused before its body was read.
var ErrRefused = errors.New("refused before the body was read")

type refused struct{ error }

func (r refused) Unwrap() []error { return []error{r.error, ErrRefused} }

// wrote counts a write that became visible and says when its placement
// was degraded (each distinct reason once at WARN, then at DEBUG).
func (w *Writer) wrote(e catalog.Entry, place grid.Placement) {
	w.metrics.Writes.Inc()
	if !place.Degraded {
		return
	}
	w.metrics.Degraded.Inc()
	if _, seen := w.degradedSeen.LoadOrStore(place.Reason, true); !seen {
		w.log.Warn("degraded placement (counted in harvest_blob_degraded_placements_total; logged once per reason)",
			"bucket", e.Bucket, "key", e.Key, "reason", place.Reason)
		return
	}
	w.log.Debug("degraded placement", "bucket", e.Bucket, "key", e.Key, "reason", place.Reason)
}

// written is what writing a body to its replicas computed.
type written struct {
	md5     []byte
	segment integrity.Segment
}

// writeReplicas copies body once into a pipe per node, where write sends
// it on, and returns its MD5 and block checksums. write answers the ETag
// the node gave what it stored, which must be the body's MD5: the node
// computed it of the bytes it received, so a replica damaged on its way is
// a failed write (the front hashes the body once, not once more per node).
// Each node's call holds one of its slots and is cancelled when it takes
// nothing for the node timeout. When any node or the body fails, what the
// nodes that succeeded wrote is removed (it was never offered to the
// catalogue).
func (w *Writer) writeReplicas(ctx context.Context, nodeIDs []string, body io.Reader, size int64,
	write func(ctx context.Context, node string, r io.Reader) (etag string, err error), undo func(node string)) (written, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	releases := make([]func(), 0, len(nodeIDs))
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	for _, id := range nodeIDs {
		release, err := w.nodes.Acquire(ctx, id)
		if err != nil {
			return written{}, err
		}
		releases = append(releases, release)
	}
	writers := make([]*io.PipeWriter, len(nodeIDs))
	errs := make([]error, len(nodeIDs))
	etags := make([]string, len(nodeIDs))
	var wg sync.WaitGroup
	for i, id := range nodeIDs {
		pr, pw := io.Pipe()
		writers[i] = pw
		wg.Add(1)
		go func() {
			defer wg.Done()
			nctx, ncancel := context.WithCancel(ctx)
			defer ncancel()
			st := nodes.NewStall(w.timeouts.Node, ncancel)
			defer st.Stop()
			etags[i], errs[i] = write(nctx, id, nodes.ProgressReader{R: pr, S: st})
			if errs[i] != nil && nctx.Err() != nil && ctx.Err() == nil {
				errs[i] = fmt.Errorf("node %s took nothing for %s: %w", id, w.timeouts.Node, errs[i])
			}
			pr.CloseWithError(errs[i]) // unblock the copy if this node failed
		}()
	}
	h := md5.New()
	blocks := integrity.NewHasher(integrity.BlockSizeFor(size))
	ws := []io.Writer{h, blocks}
	for _, w := range writers {
		ws = append(ws, w)
	}
	src := &readErr{r: body}
	n, copyErr := io.CopyBuffer(io.MultiWriter(ws...), src, make([]byte, 1<<20))
	if copyErr == nil && n != size {
		copyErr = fmt.Errorf("body had %d bytes, Content-Length said %d", n, size)
	}
	for _, w := range writers {
		w.CloseWithError(copyErr)
	}
	if copyErr != nil {
		cancel()
	}
	wg.Wait()
	sum := h.Sum(nil)
	stored := make([]bool, len(nodeIDs)) // the node kept a replica, good or not
	for i, id := range nodeIDs {
		stored[i] = errs[i] == nil
		if got := strings.Trim(etags[i], `"`); copyErr == nil && stored[i] && got != hex.EncodeToString(sum) {
			errs[i] = fmt.Errorf("node %s stored the body with MD5 %s, the front sent %x", id, got, sum)
		}
	}
	err := errors.Join(errs...)
	if copyErr == nil && err == nil {
		return written{md5: sum, segment: blocks.Segment()}, nil
	}
	for i, id := range nodeIDs {
		if stored[i] {
			undo(id)
		}
	}
	switch {
	case src.err != nil: // the client's body failed (or its signature or checksum check)
		return written{}, clientBodyError(src.err)
	case copyErr != nil && err == nil:
		return written{}, s3err.GetAPIError(s3err.ErrIncompleteBody) // a short body
	}
	for i, id := range nodeIDs {
		if errs[i] != nil && minio.ToErrorResponse(errs[i]).Code == "XMinioStorageFull" {
			w.nodes.DiskFull(id)
			w.log.Warn("a storage node's disk is full", "node", id)
			return written{}, errStorageFull(len(nodeIDs), size)
		}
		if errs[i] != nil && minio.ToErrorResponse(errs[i]).Code == "MetadataTooLarge" {
			return written{}, s3err.GetAPIError(s3err.ErrMetadataTooLarge)
		}
	}
	w.metrics.WriteFailures.Inc()
	w.log.Warn("replica write failed", "nodes", nodeIDs, "error", err)
	return written{}, ErrUnavailable
}

// putReplicas writes e's body to every node as the replica name (carrying
// e as metadata); on failure nothing stays behind.
func (w *Writer) putReplicas(ctx context.Context, nodeIDs []string, name string, body io.Reader, e catalog.Entry) (written, error) {
	meta := catalog.Meta(e)
	return w.writeReplicas(ctx, nodeIDs, body, e.Size, func(ctx context.Context, node string, r io.Reader) (string, error) {
		return w.putReplica(ctx, node, name, r, e.Size, meta)
	}, func(node string) { w.removeFresh(node, name) })
}

// putReplica writes one replica and answers the node's ETag. The body is
// sent unsigned (signing it would hash every byte once more per replica,
// on the front's cores); writeReplicas checks the ETag, the MD5 the node
// computed, against the body's.
func (w *Writer) putReplica(ctx context.Context, node, name string, r io.Reader, size int64, meta map[string]string) (string, error) {
	info, err := w.nodes.Client(node).PutObject(ctx, nodes.DataBucket, name, r, size, "", "",
		minio.PutObjectOptions{UserMetadata: meta, DisableMultipart: true, DisableContentSha256: true})
	return info.ETag, err
}

// removeFresh deletes, in the background and within the node timeout, a
// replica that was never offered to the catalogue (a write that failed
// before its entry was written): no entry can reach it. Anything else is
// the garbage collector's to delete.
func (w *Writer) removeFresh(node, name string) {
	go func() {
		_ = w.nodes.Call(context.Background(), node, func(ctx context.Context) error {
			return w.nodes.Client(node).RemoveObject(ctx, nodes.DataBucket, name, minio.RemoveObjectOptions{})
		})
	}()
}

// readErr remembers the error reading the client's body gave, to tell it
// from a node failing.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}
