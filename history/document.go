package history

import (
	"context"
	"encoding/json"
	"fmt"
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
	key := s.keys.prefix + name
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
