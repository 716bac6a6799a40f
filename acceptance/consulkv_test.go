//go:build acceptance

package acceptance

import (
	"context"
	"fmt"
	"slices"
	"testing"

	consulapi "github.com/hashicorp/consul/api"

	"github.com/harvest-platform/harvest/kv"
)

// TestConsulKVListIndexReadsEveryKeyOfAPrefix: the history's bulk read
// (keys, then read transactions of 16 keys) returns, on the real Consul,
// exactly what one ?recurse list returns (keys, values, indexes) and the
// prefix's index, across several transactions; an empty prefix reads as
// nothing.
func TestConsulKVListIndexReadsEveryKeyOfAPrefix(t *testing.T) {
	client := consulAPI(t, cluster.ConsulAddr())
	prefix := "harvest-consulkv-acc/"
	t.Cleanup(func() { _, _ = client.KV().DeleteTree(prefix, nil) })
	for i := range 40 {
		value := []byte(fmt.Sprintf("value %d %s", i, string(make([]byte, i*100))))
		if _, err := client.KV().Put(&consulapi.KVPair{Key: fmt.Sprintf("%sday/%02d", prefix, i), Value: value}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.KV().Put(&consulapi.KVPair{Key: prefix + "other", Value: []byte("x")}, nil); err != nil {
		t.Fatal(err)
	}
	kv := kv.NewConsul(client)
	got, index, err := kv.ListIndex(context.Background(), prefix+"day/")
	if err != nil {
		t.Fatal(err)
	}
	want, meta, err := client.KV().List(prefix+"day/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 || len(want) != 40 || index != meta.LastIndex {
		t.Fatalf("read %d pairs at index %d; one list has %d at %d", len(got), index, len(want), meta.LastIndex)
	}
	for i, w := range want {
		g := got[i]
		if g.Key != w.Key || !slices.Equal(g.Value, w.Value) || g.Index != w.ModifyIndex {
			t.Fatalf("pair %d: %s (%d bytes, index %d), want %s (%d bytes, index %d)", i, g.Key, len(g.Value), g.Index,
				w.Key, len(w.Value), w.ModifyIndex)
		}
	}
	if got, _, err := kv.ListIndex(context.Background(), prefix+"none/"); err != nil || len(got) != 0 {
		t.Fatalf("an empty prefix read as %d pairs (%v)", len(got), err)
	}
}
