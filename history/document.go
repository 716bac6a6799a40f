package history

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// PutDocument stores v as JSON at prefix+name (the placer's class table
// lives at "classes"), replacing what was there.
func (s *Store) PutDocument(ctx context.Context, name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.update(ctx, s.keys.prefix+name, func([]byte, bool) ([]byte, error) { return data, nil })
}

// GetDocument reads the JSON document at prefix+name into v; it reports
// false if there is none.
func (s *Store) GetDocument(ctx context.Context, name string, v any) (bool, error) {
	key := s.DocumentKey(name)
	data, index, err := s.kv.Get(ctx, key)
	if err != nil {
		return false, fmt.Errorf("history: read %s: %w", key, err)
	}
	if index == 0 {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, &CorruptError{Key: key, Err: err}
	}
	return true, nil
}

// DeleteDocument removes the document at prefix+name; removing one that
// is not there is no error.
func (s *Store) DeleteDocument(ctx context.Context, name string) error {
	key := s.DocumentKey(name)
	if err := s.kv.Delete(ctx, key); err != nil {
		return fmt.Errorf("history: delete %s: %w", key, err)
	}
	return nil
}

// DocumentKey is the KV key of the document name, for errors that must
// name it.
func (s *Store) DocumentKey(name string) string { return s.keys.prefix + name }

// Document is one stored document, as ListDocuments returns it.
type Document struct {
	Name  string // as PutDocument took it: the key without the prefix
	Key   string
	Value []byte
}

// Decode reads the document's JSON into v; a value that does not decode
// is a *CorruptError naming its key.
func (d Document) Decode(v any) error {
	if err := json.Unmarshal(d.Value, v); err != nil {
		return &CorruptError{Key: d.Key, Err: err}
	}
	return nil
}

// ListDocuments returns every document whose name starts with dir (a
// folder such as "declarations/tenants/"), in key order, undecoded, so
// that one corrupt value does not hide the others.
func (s *Store) ListDocuments(ctx context.Context, dir string) ([]Document, error) {
	prefix := s.DocumentKey(dir)
	pairs, err := s.kv.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("history: list %s: %w", prefix, err)
	}
	out := make([]Document, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, Document{Name: strings.TrimPrefix(p.Key, s.keys.prefix), Key: p.Key, Value: p.Value})
	}
	slices.SortFunc(out, func(a, b Document) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}
