package objects

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// minPart is the smallest part a multipart upload must have room for when
// it starts (S3's minimum part size).
const minPart = 5 << 20

// CreateUpload places the object e names under pol (its size is not known
// yet: each part's bytes are reserved on the nodes when it arrives; the
// nodes must have room for one part now), opens an upload on each node and
// records the upload. It answers the upload's ID.
func (w *Writer) CreateUpload(ctx context.Context, e catalog.Entry, pol Policy) (string, error) {
	place, err := w.Place(e, minPart, pol, nil)
	if err != nil {
		return "", err
	}
	w.nodes.Unreserve(place.Nodes, minPart) // only a check: parts reserve their own bytes
	var id [16]byte
	_, _ = randRead(id[:])
	e.Degraded = place.Degraded
	u := upload{ID: hex.EncodeToString(id[:]), Name: w.replicaName(e.Bucket, e.Key), Nodes: place.Nodes, NodeIDs: map[string]string{},
		Initiated: time.Now().UTC(), Entry: e, Reason: place.Reason}
	meta := catalog.Meta(u.Entry)
	for _, n := range place.Nodes {
		var nodeUpload string
		err := w.nodes.Call(ctx, n, func(ctx context.Context) (err error) {
			nodeUpload, err = w.nodes.Client(n).NewMultipartUpload(ctx, nodes.DataBucket, u.Name, minio.PutObjectOptions{UserMetadata: meta})
			return err
		})
		if err != nil {
			w.log.Warn("opening an upload on a node failed", "node", n, "error", err)
			w.abortOnNodes(u)
			if minio.ToErrorResponse(err).Code == "MetadataTooLarge" {
				return "", s3err.GetAPIError(s3err.ErrMetadataTooLarge)
			}
			return "", ErrUnavailable
		}
		u.NodeIDs[n] = nodeUpload
	}
	data, _ := json.Marshal(u)
	if ok, err := w.kv.CAS(ctx, w.uploadKey(e.Bucket, u.ID), data, 0); err != nil || !ok {
		if err == nil { // an ID drawn twice: nothing of this upload is recorded
			w.abortOnNodes(u)
			err = errors.New("upload ID collision")
		}
		// unconfirmed: the nodes' uploads are the GC's (it aborts those no
		// upload record names)
		return "", err
	}
	return u.ID, nil
}

// WritePart streams part number (size bytes of body) to every node's
// upload of u at once and records it while the upload is still at index
// (open, unclaimed). recorded gives the client's checksum once the body is
// read. The part's bytes, which the caller reserved on u's nodes, are
// given back when it fails.
func (w *Writer) WritePart(ctx context.Context, u catalog.Upload, index uint64, number int, size int64, body io.Reader,
	recorded func() *catalog.Checksum) (catalog.Part, error) {
	res, err := w.writeReplicas(ctx, u.Nodes, body, size, func(ctx context.Context, node string, r io.Reader) (string, error) {
		p, err := w.nodes.Client(node).PutObjectPart(ctx, nodes.DataBucket, u.Name, u.NodeIDs[node], number, r, size,
			minio.PutObjectPartOptions{DisableContentSha256: true})
		return p.ETag, err
	}, func(string) {}) // a part written to some nodes only is overwritten by the client's retry
	if err != nil {
		w.nodes.Unreserve(u.Nodes, size)
		return part{}, err
	}
	pt := part{Number: number, Size: size, MD5: hex.EncodeToString(res.md5), Segment: res.segment, Checksum: recorded(), Written: time.Now().UTC()}
	if err := w.recordPart(ctx, u, index, pt); err != nil {
		w.nodes.Unreserve(u.Nodes, size)
		return part{}, err
	}
	return pt, nil
}

// recordPart writes a part record while the upload record is still at
// index (open, unclaimed); a part that replaces one of the same number
// gives the old one's bytes back.
func (w *Writer) recordPart(ctx context.Context, u upload, index uint64, pt part) error {
	key := w.partKey(u.Entry.Bucket, u.ID, pt.Number)
	old, oldIndex, err := w.kv.Get(ctx, key)
	if err != nil {
		return err
	}
	data, _ := json.Marshal(pt)
	ok, err := w.kv.Txn(ctx, []kv.Op{{Verb: kv.CheckIndex, Key: w.uploadKey(u.Entry.Bucket, u.ID), Index: index},
		{Verb: kv.CAS, Key: key, Value: data, Index: oldIndex}})
	if err != nil { // unconfirmed: read back
		rctx, cancel := context.WithTimeout(context.Background(), w.timeouts.Consul)
		defer cancel()
		got, _, rerr := w.kv.Get(rctx, key)
		if rerr != nil || string(got) != string(data) {
			return err
		}
		ok = true
	}
	if !ok {
		// claimed, aborted, or the same part written twice at once: the
		// client is told the upload is not open for it
		return s3err.GetAPIError(s3err.ErrNoSuchUpload)
	}
	var prev part
	if oldIndex != 0 && json.Unmarshal(old, &prev) == nil {
		w.nodes.Unreserve(u.Nodes, prev.Size)
	}
	return nil
}

// Uploads are the upload records of a bucket's uploads in progress (a
// record that does not decode is left out).
func (w *Writer) Uploads(ctx context.Context, bucket string) ([]catalog.Upload, error) {
	pairs, err := w.kv.List(ctx, w.uploadKey(bucket, ""))
	if err != nil {
		return nil, err
	}
	var out []catalog.Upload
	for _, p := range pairs {
		var u upload
		if json.Unmarshal(p.Value, &u) != nil {
			continue
		}
		out = append(out, u)
	}
	return out, nil
}

// abortOnNodes drops the nodes' uploads of u, in the background.
func (w *Writer) abortOnNodes(u upload) {
	for n, id := range u.NodeIDs {
		go func() {
			_ = w.nodes.Call(context.Background(), n, func(ctx context.Context) error {
				return w.nodes.Client(n).AbortMultipartUpload(ctx, nodes.DataBucket, u.Name, id)
			})
		}()
	}
}
