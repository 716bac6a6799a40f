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
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/harvest-platform/harvest/history"
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
	kv     history.KV
	prefix string
}

// NewStore keeps the catalogue under prefix (e.g. "harvest/").
func NewStore(kv history.KV, prefix string) *Store {
	return &Store{kv: kv, prefix: history.KeyPrefix(prefix) + "blob/objects/"}
}

func (s *Store) bucketDir(bucket string) string { return s.prefix + url.PathEscape(bucket) + "/" }

func (s *Store) key(bucket, key string) string { return s.bucketDir(bucket) + url.PathEscape(key) }

// Put records an object (a new one, or a new version replacing the old);
// it returns the entry it replaced, if any, so its replicas can be deleted.
func (s *Store) Put(ctx context.Context, e Entry) (*Entry, error) {
	if err := ValidateKey(e.Key); err != nil {
		return nil, err
	}
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var prev *Entry
	err = history.Update(ctx, s.kv, s.key(e.Bucket, e.Key), func(old []byte, exists bool) ([]byte, error) {
		prev = nil
		if exists {
			prev = &Entry{}
			if json.Unmarshal(old, prev) != nil {
				prev = nil // a corrupt entry is replaced, its replicas left to the scrubber
			}
		}
		return data, nil
	})
	return prev, err
}

// ErrNotFound says the catalogue has no such object.
var ErrNotFound = errors.New("no such object")

// Get returns an object's entry.
func (s *Store) Get(ctx context.Context, bucket, key string) (Entry, error) {
	k := s.key(bucket, key)
	data, index, err := s.kv.Get(ctx, k)
	if err != nil {
		return Entry{}, err
	}
	if index == 0 {
		return Entry{}, ErrNotFound
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return Entry{}, &history.CorruptError{Key: k, Err: err}
	}
	if e.Bucket != bucket || e.Key != key {
		return Entry{}, &history.CorruptError{Key: k, Err: fmt.Errorf("holds %s/%s", e.Bucket, e.Key)}
	}
	return e, nil
}

// Delete removes an object's entry and returns it (its replicas are the
// caller's to delete).
func (s *Store) Delete(ctx context.Context, bucket, key string) (Entry, error) {
	e, err := s.Get(ctx, bucket, key)
	if err != nil {
		return Entry{}, err
	}
	return e, s.kv.Delete(ctx, s.key(bucket, key))
}

// List returns the entries of a bucket whose keys start with prefix and sort
// after marker, at most max of them, in key order, and whether more remain.
// Escaping keeps prefixes (byte by byte), so only the prefix's KV keys are read.
func (s *Store) List(ctx context.Context, bucket, prefix, marker string, max int) ([]Entry, bool, error) {
	pairs, err := s.kv.List(ctx, s.key(bucket, prefix))
	if err != nil {
		return nil, false, err
	}
	var out []Entry
	for _, p := range pairs {
		var e Entry
		if err := json.Unmarshal(p.Value, &e); err != nil {
			return nil, false, &history.CorruptError{Key: p.Key, Err: err}
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

// Meta is the entry as user metadata for a replica on a storage node (one
// JSON value), from which the catalogue can be rebuilt.
func Meta(e Entry) map[string]string {
	c := e
	c.Replicas = nil
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
// object is gone.
func (s *Store) Update(ctx context.Context, bucket, key string, fn func(e *Entry) error) (Entry, error) {
	var out Entry
	k := s.key(bucket, key)
	err := history.Update(ctx, s.kv, k, func(old []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, ErrNotFound
		}
		var e Entry
		if err := json.Unmarshal(old, &e); err != nil {
			return nil, &history.CorruptError{Key: k, Err: err}
		}
		if err := fn(&e); err != nil {
			return nil, err
		}
		out = e
		return json.Marshal(e)
	})
	return out, err
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
