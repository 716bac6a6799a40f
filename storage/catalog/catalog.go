// Package catalog owns the blob tier's catalogue: for every object, what a
// client wrote (size, ETag, Last-Modified, content type, user metadata) and
// where its replicas live. Clients are served from it, so a replica
// re-created on another node changes nothing they see. It is kept in
// Consul KV through history.KV (check-and-set), one key per object:
//
//	blob/objects/<bucket>/<object key, path-escaped>
//
// Object keys are escaped so that any key a client may send ("../x",
// "a//b", unicode, 1 KiB long) maps to exactly one KV key and back. Each
// replica also carries the entry as MinIO user metadata (see Meta), so the
// catalogue can be rebuilt from the storage nodes alone.
//
// Every change of an entry is a check-and-set on its ModifyIndex (one
// linearisation point per key); a delete leaves a tombstone
// (blob/tombstones/<bucket>/<key>) in the same transaction, so a rebuild
// from the nodes never brings the deleted version back. The records of
// multipart uploads, which become entries, are declared here too
// (uploads.go).
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/integrity"
)

// Replica is one copy of an object on a storage node.
type Replica struct {
	Node string `json:"node"`
	// Name is the object's name on the node (content-addressed, so that a
	// rewrite never overwrites a replica a reader may be using).
	Name string `json:"name"`
}

// Entry is one object as the catalogue knows it.
type Entry struct {
	// Version is unique to one write of the key (repairs and metadata
	// changes keep it): what a check-and-set that must not cross a rewrite
	// compares.
	Version      string            `json:"version,omitempty"`
	Bucket       string            `json:"bucket"`
	Key          string            `json:"key"`
	Size         int64             `json:"size"`
	ETag         string            `json:"etag"`
	LastModified time.Time         `json:"last_modified"`
	ContentType  string            `json:"content_type,omitempty"`
	UserMeta     map[string]string `json:"user_meta,omitempty"`
	Replicas     []Replica         `json:"replicas"`
	// Degraded says the placement could not keep every diversity rule
	// (moving its replicas once it can is not built yet).
	Degraded bool `json:"degraded,omitempty"`
	// Layout holds the block checksums every read, scrub and repair
	// checks the bytes against (empty for entries written before them).
	Layout integrity.Layout `json:"layout,omitempty"`
	// Checksum is the S3 checksum the client sent with a single PUT
	// (x-amz-checksum-<algorithm>), checked when written and answered on
	// reads of the whole object with checksum mode enabled.
	Checksum *Checksum `json:"checksum,omitempty"`
}

// Checksum is an S3 full-object checksum: its algorithm (CRC32, CRC32C,
// SHA1, SHA256, CRC64NVME) and base64 value.
type Checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"value"`
}

// Tombstone records a deleted object: when, and the replica names of the
// version deleted, so that a rebuild from the nodes skips them.
type Tombstone struct {
	Bucket  string    `json:"bucket"`
	Key     string    `json:"key"`
	Deleted time.Time `json:"deleted"`
	Names   []string  `json:"names"`
}

// Buries says whether the tombstone covers a replica of the key written
// at modified under name: the version deleted, or one older than it.
func (t Tombstone) Buries(name string, modified time.Time) bool {
	return slices.Contains(t.Names, name) || modified.Before(t.Deleted)
}

// maxKey is S3's limit on an object key (bytes).
const maxKey = 1024

// ValidateKey refuses keys S3 itself refuses.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return errors.New("empty object key")
	case len(key) > maxKey:
		return fmt.Errorf("object key of %d bytes, S3 allows %d", len(key), maxKey)
	case !utf8.ValidString(key):
		return errors.New("object key is not valid UTF-8")
	}
	return nil
}

// Store reads and writes the catalogue.
type Store struct {
	kv     kv.KV
	prefix string
	tombs  string
}

// NewStore keeps the catalogue under prefix (e.g. "harvest/").
func NewStore(store kv.KV, prefix string) *Store {
	p := history.KeyPrefix(prefix)
	return &Store{kv: store, prefix: p + "blob/objects/", tombs: p + "blob/tombstones/"}
}

func (s *Store) bucketDir(bucket string) string { return s.prefix + url.PathEscape(bucket) + "/" }

// Key is the KV key of an object's entry.
func (s *Store) Key(bucket, key string) string { return s.bucketDir(bucket) + url.PathEscape(key) }

// TombstoneKey is the KV key of an object's tombstone.
func (s *Store) TombstoneKey(bucket, key string) string {
	return s.tombs + url.PathEscape(bucket) + "/" + url.PathEscape(key)
}

// ErrNotFound says the catalogue has no such object.
var ErrNotFound = errors.New("no such object")

// Get returns an object's entry.
func (s *Store) Get(ctx context.Context, bucket, key string) (Entry, error) {
	e, _, err := s.Lookup(ctx, bucket, key)
	return e, err
}

// Lookup returns an object's entry and its ModifyIndex, the index a
// check-and-set of the entry must name (ErrNotFound and index 0 when the
// object is absent).
func (s *Store) Lookup(ctx context.Context, bucket, key string) (Entry, uint64, error) {
	k := s.Key(bucket, key)
	data, index, err := s.kv.Get(ctx, k)
	if err != nil {
		return Entry{}, 0, err
	}
	if index == 0 {
		return Entry{}, 0, ErrNotFound
	}
	e, err := decode(k, data)
	if err == nil && (e.Bucket != bucket || e.Key != key) {
		err = &history.CorruptError{Key: k, Err: fmt.Errorf("holds %s/%s", e.Bucket, e.Key)}
	}
	return e, index, err
}

func decode(k string, data []byte) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return Entry{}, &history.CorruptError{Key: k, Err: err}
	}
	if err := e.Layout.Validate(); err != nil {
		return Entry{}, &history.CorruptError{Key: k, Err: err}
	}
	return e, nil
}

// PutOp is the transaction op that writes e if its entry's ModifyIndex is
// still index (0: only if absent).
func (s *Store) PutOp(e Entry, index uint64) (kv.Op, error) {
	if err := ValidateKey(e.Key); err != nil {
		return kv.Op{}, err
	}
	data, err := json.Marshal(e)
	if err != nil {
		return kv.Op{}, err
	}
	return kv.Op{Verb: kv.CAS, Key: s.Key(e.Bucket, e.Key), Value: data, Index: index}, nil
}

// Replace writes e if its entry's ModifyIndex is still index (0: only if
// the object is absent): false when another writer got there first. An
// error does not say the write did not happen (see kv.KV).
func (s *Store) Replace(ctx context.Context, e Entry, index uint64) (bool, error) {
	op, err := s.PutOp(e, index)
	if err != nil {
		return false, err
	}
	return s.kv.CAS(ctx, op.Key, op.Value, op.Index)
}

// Delete removes an object's entry if its ModifyIndex is still index and
// leaves a tombstone for the version it held, in one transaction: false
// when the entry changed meanwhile.
func (s *Store) Delete(ctx context.Context, e Entry, index uint64, at time.Time) (bool, error) {
	t := Tombstone{Bucket: e.Bucket, Key: e.Key, Deleted: at.UTC()}
	for _, r := range e.Replicas {
		if !slices.Contains(t.Names, r.Name) {
			t.Names = append(t.Names, r.Name)
		}
	}
	data, err := json.Marshal(t)
	if err != nil {
		return false, err
	}
	return s.kv.Txn(ctx, []kv.Op{{Verb: kv.DeleteCAS, Key: s.Key(e.Bucket, e.Key), Index: index},
		{Verb: kv.Set, Key: s.TombstoneKey(e.Bucket, e.Key), Value: data}})
}

// Tombstones lists every tombstone, with its ModifyIndex.
func (s *Store) Tombstones(ctx context.Context) (map[uint64]Tombstone, error) {
	pairs, err := s.kv.List(ctx, s.tombs)
	if err != nil {
		return nil, err
	}
	out := map[uint64]Tombstone{}
	for _, p := range pairs {
		var t Tombstone
		if json.Unmarshal(p.Value, &t) == nil {
			out[p.Index] = t
		}
	}
	return out, nil
}

// DropTombstone removes a tombstone if it is still the one read (index).
func (s *Store) DropTombstone(ctx context.Context, t Tombstone, index uint64) error {
	_, err := s.kv.DeleteCAS(ctx, s.TombstoneKey(t.Bucket, t.Key), index)
	return err
}

// List returns the entries of a bucket whose keys start with prefix and sort
// after marker, at most max of them, in key order, and whether more remain.
// Escaping keeps prefixes (byte by byte), so only the prefix's KV keys are read.
func (s *Store) List(ctx context.Context, bucket, prefix, marker string, max int) ([]Entry, bool, error) {
	pairs, err := s.kv.List(ctx, s.Key(bucket, prefix))
	if err != nil {
		return nil, false, err
	}
	var out []Entry
	for _, p := range pairs {
		e, err := decode(p.Key, p.Value)
		if err != nil {
			return nil, false, err
		}
		if strings.HasPrefix(e.Key, prefix) && e.Key > marker {
			out = append(out, e)
		}
	}
	// escaped keys do not sort like keys: sort by the key itself, as S3 does
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	if max >= 0 && len(out) > max {
		return out[:max], true, nil
	}
	return out, false, nil
}

// Keys returns the object keys of a bucket that start with prefix and sort
// after marker, in key order, read without their entries (Consul's ?keys),
// so that a page of a large bucket reads the entries of that page only
// (Entries) instead of the whole bucket's.
func (s *Store) Keys(ctx context.Context, bucket, prefix, marker string) ([]string, error) {
	ks, _, err := s.kv.Keys(ctx, s.Key(bucket, prefix), "")
	if err != nil {
		return nil, err
	}
	dir := s.bucketDir(bucket)
	out := make([]string, 0, len(ks))
	for _, k := range ks {
		key, err := url.PathUnescape(strings.TrimPrefix(k, dir))
		if err != nil {
			return nil, &history.CorruptError{Key: k, Err: err}
		}
		if strings.HasPrefix(key, prefix) && key > marker {
			out = append(out, key)
		}
	}
	sort.Strings(out) // escaped keys do not sort like keys
	return out, nil
}

// entryReaders bounds the entries Entries reads at once.
const entryReaders = 16

// Entries reads the entries of keys, in their order, entryReaders at a
// time; a key deleted since it was listed is left out.
func (s *Store) Entries(ctx context.Context, bucket string, keys []string) ([]Entry, error) {
	got := make([]*Entry, len(keys))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(entryReaders)
	for i, key := range keys {
		g.Go(func() error {
			e, err := s.Get(ctx, bucket, key)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			got[i] = &e
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(keys))
	for _, e := range got {
		if e != nil {
			out = append(out, *e)
		}
	}
	return out, nil
}

// Meta is the entry as user metadata for a replica on a storage node (one
// JSON value), from which the catalogue can be rebuilt. The block
// checksums stay out (they may be larger than a node accepts as metadata):
// a rebuilt entry is served unchecked until it is written again.
func Meta(e Entry) map[string]string {
	c := e
	c.Replicas, c.Layout = nil, nil
	data, _ := json.Marshal(c)
	return map[string]string{"Harvest-Entry": string(data)}
}

// FromMeta reads an entry back from a replica's user metadata.
func FromMeta(meta map[string]string) (Entry, error) {
	for k, v := range meta {
		if strings.EqualFold(k, "Harvest-Entry") || strings.EqualFold(k, "X-Amz-Meta-Harvest-Entry") {
			var e Entry
			if err := json.Unmarshal([]byte(v), &e); err != nil {
				return Entry{}, fmt.Errorf("replica metadata: %w", err)
			}
			return e, ValidateKey(e.Key)
		}
	}
	return Entry{}, errors.New("replica carries no Harvest-Entry metadata")
}

// Update changes an object's entry with fn under check-and-set (fn may be
// called again if another writer got there first). ErrNotFound when the
// object is gone. An error other than fn's does not say the update did not
// happen: fn must be safe to apply twice.
func (s *Store) Update(ctx context.Context, bucket, key string, fn func(e *Entry) error) (Entry, error) {
	var out Entry
	k := s.Key(bucket, key)
	err := history.Update(ctx, s.kv, k, func(old []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, ErrNotFound
		}
		e, err := decode(k, old)
		if err != nil {
			return nil, err
		}
		if err := fn(&e); err != nil {
			return nil, err
		}
		out = e
		return json.Marshal(e)
	})
	return out, err
}

// SameVersion reports whether two entries are of one write of the key.
// Entries written before versions compare by ETag, Last-Modified and size.
func SameVersion(a, b Entry) bool {
	if a.Version != "" || b.Version != "" {
		return a.Version == b.Version
	}
	return a.ETag == b.ETag && a.LastModified.Equal(b.LastModified) && a.Size == b.Size
}

// HasReplicaOn reports whether the entry has a replica on the node.
func (e Entry) HasReplicaOn(node string) bool {
	for _, r := range e.Replicas {
		if r.Node == node {
			return true
		}
	}
	return false
}

// WithoutNode returns the replicas not on the node.
func (e Entry) WithoutNode(node string) []Replica {
	var out []Replica
	for _, r := range e.Replicas {
		if r.Node != node {
			out = append(out, r)
		}
	}
	return out
}
