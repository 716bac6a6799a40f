package objects

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/integrity"
)

// A multipart upload lives in Consul KV as three kinds of record:
//
//	blob/uploads/<bucket>/<id>         the upload: placement, each node's own
//	                                   upload ID, and who is completing it
//	blob/parts/<bucket>/<id>/<number>  one per part received: size, MD5,
//	                                   block checksums, the client's checksum
//	blob/finished/<bucket>/<id>        how it ended (completed with its ETag, or
//	                                   aborted), kept for finished_retention so
//	                                   that a retried Complete or Abort gets the
//	                                   answer the first one got
//
// The upload record is the upload's linearisation point. A part is
// recorded only while the upload record is unchanged (open and unclaimed).
// A Complete claims the record (check-and-set) before it touches the
// nodes, and makes the object visible in one transaction that writes the
// entry, deletes the upload record at the index it claimed and writes the
// finished record; an Abort deletes the record at the index it read and
// writes the finished record in one transaction. So exactly one of them
// wins, and the loser learns it from the finished record.

// upload, part and finished are the three records, declared in
// storage/catalog (the garbage collector, storage/upkeep, reads them too).
type (
	upload   = catalog.Upload
	part     = catalog.Part
	finished = catalog.Finished
)

func (w *Writer) uploadKey(bucket, id string) string {
	return w.prefix + "blob/uploads/" + url.PathEscape(bucket) + "/" + id
}

func (w *Writer) partsDir(bucket, id string) string {
	return w.prefix + "blob/parts/" + url.PathEscape(bucket) + "/" + id + "/"
}

func (w *Writer) partKey(bucket, id string, number int) string {
	return fmt.Sprintf("%s%05d", w.partsDir(bucket, id), number)
}

func (w *Writer) finishedKey(bucket, id string) string {
	return w.prefix + "blob/finished/" + url.PathEscape(bucket) + "/" + id
}

// validUploadID refuses IDs that are not ours (they would name other keys).
func validUploadID(id string) bool {
	if len(id) != 32 {
		return false
	}
	return strings.Trim(id, "0123456789abcdef") == ""
}

// LoadUpload reads an upload record and its index; NoSuchUpload (or
// NoSuchBucket) when there is none for the key.
func (w *Writer) LoadUpload(ctx context.Context, bucket, key, id string) (upload, uint64, error) {
	var u upload
	if !validUploadID(id) {
		return u, 0, w.missing(ctx, bucket, s3err.GetAPIError(s3err.ErrNoSuchUpload))
	}
	data, index, err := w.kv.Get(ctx, w.uploadKey(bucket, id))
	if err != nil {
		return u, 0, err
	}
	if index == 0 {
		return u, 0, w.missing(ctx, bucket, s3err.GetAPIError(s3err.ErrNoSuchUpload))
	}
	if err := json.Unmarshal(data, &u); err != nil {
		return u, 0, &history.CorruptError{Key: w.uploadKey(bucket, id), Err: err}
	}
	if u.Entry.Key != key {
		return u, 0, s3err.GetAPIError(s3err.ErrNoSuchUpload)
	}
	return u, index, nil
}

// loadFinished reads how an upload ended (ok false: no record).
func (w *Writer) loadFinished(ctx context.Context, bucket, id string) (finished, bool, error) {
	var f finished
	data, index, err := w.kv.Get(ctx, w.finishedKey(bucket, id))
	if err != nil || index == 0 {
		return f, false, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, false, &history.CorruptError{Key: w.finishedKey(bucket, id), Err: err}
	}
	return f, true, nil
}

// LoadParts reads an upload's part records, by number.
func (w *Writer) LoadParts(ctx context.Context, bucket, id string) (map[int]part, error) {
	pairs, err := w.kv.List(ctx, w.partsDir(bucket, id))
	if err != nil {
		return nil, err
	}
	out := map[int]part{}
	for _, p := range pairs {
		var pt part
		if err := json.Unmarshal(p.Value, &pt); err != nil {
			return nil, &history.CorruptError{Key: p.Key, Err: err}
		}
		if err := (integrity.Layout{pt.Segment}).Validate(); err != nil {
			return nil, &history.CorruptError{Key: p.Key, Err: err}
		}
		out[pt.Number] = pt
	}
	return out, nil
}

// finishOps are the transaction ops that retire an upload read at index
// and record how it ended.
func (w *Writer) finishOps(u upload, index uint64, f finished) []kv.Op {
	data, _ := json.Marshal(f)
	return []kv.Op{{Verb: kv.DeleteCAS, Key: w.uploadKey(u.Entry.Bucket, u.ID), Index: index},
		{Verb: kv.Set, Key: w.finishedKey(u.Entry.Bucket, u.ID), Value: data}}
}

// partBytes is what an upload's recorded parts hold on each of its nodes.
func partBytes(parts map[int]part) int64 {
	var n int64
	for _, p := range parts {
		n += p.Size
	}
	return n
}

// dropParts deletes an upload's part records once it has ended (in the
// background; the garbage collector removes what this misses).
func (w *Writer) dropParts(bucket, id string, parts map[int]part) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*w.timeouts.Consul)
		defer cancel()
		for n := range parts {
			_ = w.kv.Delete(ctx, w.partKey(bucket, id, n))
		}
	}()
}

// RecountUploads holds the bytes of every open upload's recorded parts on
// its nodes (at start: they count against the nodes' capacity until the
// upload ends).
func (w *Writer) RecountUploads(ctx context.Context) error {
	pairs, err := w.kv.List(ctx, w.prefix+"blob/uploads/")
	if err != nil {
		return err
	}
	for _, p := range pairs {
		var u upload
		if json.Unmarshal(p.Value, &u) != nil {
			continue
		}
		parts, err := w.LoadParts(ctx, u.Entry.Bucket, u.ID)
		if err != nil {
			return err
		}
		for _, n := range u.Nodes {
			w.nodes.AddPending(n, partBytes(parts))
		}
	}
	return nil
}
