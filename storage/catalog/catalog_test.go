package catalog

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
)

var ctx = context.Background()

func entry(key string) Entry {
	return Entry{Bucket: "data", Key: key, Size: 3, ETag: `"abc"`, LastModified: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC),
		UserMeta: map[string]string{"mtime": "1"}, Replicas: []Replica{{Node: "n1", Name: "x"}}}
}

func TestHostileKeysMapToOneKVKeyEachAndBack(t *testing.T) {
	mem := kv.NewMem()
	s := NewStore(mem, "harvest")
	keys := []string{"../../etc/passwd", "a//b", "a/b", "a%2Fb", "日本/データ", "?x=1&y#z", " lead", strings.Repeat("k", 1024), "harvest/blob/objects/data/x"}
	for _, k := range keys {
		if ok, err := s.Replace(ctx, entry(k), 0); err != nil || !ok {
			t.Fatalf("%q: %v %v", k, ok, err)
		}
	}
	pairs, _ := mem.List(ctx, "")
	if len(pairs) != len(keys) {
		t.Fatalf("%d KV keys for %d object keys", len(pairs), len(keys))
	}
	for _, p := range pairs {
		if !strings.HasPrefix(p.Key, "harvest/blob/objects/data/") || strings.Count(strings.TrimPrefix(p.Key, "harvest/blob/objects/data/"), "/") != 0 {
			t.Fatalf("KV key %q escapes its bucket folder", p.Key)
		}
	}
	for _, k := range keys {
		e, err := s.Get(ctx, "data", k)
		if err != nil || e.Key != k {
			t.Fatalf("%q read back as %q (%v)", k, e.Key, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("k", 1025), "\xff\xfe"} {
		if _, err := s.Replace(ctx, entry(bad), 0); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

func TestListIsInKeyOrderWithPrefixMarkerAndLimit(t *testing.T) {
	s := NewStore(kv.NewMem(), "harvest/")
	for _, k := range []string{"b/2", "a", "b/1", "b%", "c", "日本"} {
		if _, err := s.Replace(ctx, entry(k), 0); err != nil {
			t.Fatal(err)
		}
	}
	got, more, err := s.List(ctx, "data", "b", "", 2)
	if err != nil || !more || len(got) != 2 || got[0].Key != "b%" || got[1].Key != "b/1" {
		t.Fatalf("page 1: %v more=%v %v", keysOf(got), more, err)
	}
	got, more, _ = s.List(ctx, "data", "b", got[1].Key, 2)
	if more || len(got) != 1 || got[0].Key != "b/2" {
		t.Fatalf("page 2: %v more=%v", keysOf(got), more)
	}
	// prefixes that escape (a slash, a percent sign, half a UTF-8 rune) select the same keys
	for prefix, want := range map[string]string{"b/": "b/1 b/2", "b%": "b%", "\xe6": "日本", "日": "日本"} {
		got, _, err := s.List(ctx, "data", prefix, "", -1)
		if err != nil || strings.Join(keysOf(got), " ") != want {
			t.Errorf("prefix %q: %v %v, want %s", prefix, keysOf(got), err, want)
		}
	}
}

// TestKeysThenEntriesReadWhatListReads: the keys of a prefix after a
// marker, then the entries of some of them, give what List gives, reading
// only the entries asked for; an object deleted in between is left out.
func TestKeysThenEntriesReadWhatListReads(t *testing.T) {
	mem := kv.NewMem()
	s := NewStore(mem, "harvest/")
	for _, k := range []string{"b/2", "a", "b/1", "b%", "c", "日本", "../x", "a//b"} {
		if _, err := s.Replace(ctx, entry(k), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"", "b", "b/", "b%", "\xe6", "日", "a/", "."} {
		for _, marker := range []string{"", "a", "b/1", "zzz"} {
			want, _, err := s.List(ctx, "data", prefix, marker, -1)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := s.Keys(ctx, "data", prefix, marker)
			if err != nil || strings.Join(keys, " ") != strings.Join(keysOf(want), " ") {
				t.Fatalf("prefix %q marker %q: keys %q (%v), want %q", prefix, marker, keys, err, keysOf(want))
			}
			got, err := s.Entries(ctx, "data", keys)
			if err != nil || strings.Join(keysOf(got), " ") != strings.Join(keys, " ") {
				t.Fatalf("prefix %q marker %q: entries %q (%v)", prefix, marker, keysOf(got), err)
			}
		}
	}
	keys, _ := s.Keys(ctx, "data", "b", "")
	if err := mem.Delete(ctx, s.Key("data", "b/1")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Entries(ctx, "data", keys)
	if err != nil || strings.Join(keysOf(got), " ") != "b% b/2" {
		t.Fatalf("with b/1 deleted after the listing: %q %v", keysOf(got), err)
	}
	mem.Put(s.Key("data", "bad"), []byte("{"))
	if _, err := s.Entries(ctx, "data", []string{"a", "bad"}); err == nil {
		t.Fatal("a corrupt entry on the page went unreported")
	}
}

func keysOf(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

// TestReplaceAndDeleteAreCheckAndSet: a write or delete naming an index
// that is no longer current changes nothing; a delete leaves a tombstone
// that buries the deleted version and older ones, not newer ones.
func TestReplaceAndDeleteAreCheckAndSet(t *testing.T) {
	mem := kv.NewMem()
	s := NewStore(mem, "harvest/")
	if ok, err := s.Replace(ctx, entry("k"), 0); err != nil || !ok {
		t.Fatalf("first put: %v %v", ok, err)
	}
	if ok, _ := s.Replace(ctx, entry("k"), 0); ok {
		t.Fatal("create-if-absent replaced an entry")
	}
	_, i1, _ := s.Lookup(ctx, "data", "k")
	e2 := entry("k")
	e2.Replicas = []Replica{{Node: "n2", Name: "y"}}
	if ok, err := s.Replace(ctx, e2, i1); err != nil || !ok {
		t.Fatalf("overwrite: %v %v", ok, err)
	}
	if ok, _ := s.Delete(ctx, e2, i1, time.Now()); ok {
		t.Fatal("a delete at a stale index succeeded")
	}
	got, i2, _ := s.Lookup(ctx, "data", "k")
	if got.Replicas[0].Name != "y" {
		t.Fatalf("entry now %+v", got)
	}
	mem.Put("harvest/blob/objects/data/broken", []byte("{"))
	var ce *history.CorruptError
	if _, err := s.Get(ctx, "data", "broken"); !errors.As(err, &ce) || !strings.Contains(err.Error(), "harvest/blob/objects/data/broken") {
		t.Fatalf("corrupt entry: %v", err)
	}
	at := got.LastModified.Add(time.Hour)
	if ok, err := s.Delete(ctx, got, i2, at); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := s.Get(ctx, "data", "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	tombs, err := s.Tombstones(ctx)
	if err != nil || len(tombs) != 1 {
		t.Fatalf("tombstones %v %v", tombs, err)
	}
	for _, tomb := range tombs {
		if !tomb.Buries("y", at) || !tomb.Buries("older", at.Add(-time.Second)) || tomb.Buries("newer", at.Add(time.Second)) {
			t.Fatalf("tombstone %+v buries the wrong versions", tomb)
		}
	}
}

func TestEntryRoundTripsThroughReplicaMetadata(t *testing.T) {
	e := entry("a/b")
	back, err := FromMeta(map[string]string{"X-Amz-Meta-Harvest-Entry": Meta(e)["Harvest-Entry"]})
	if err != nil || back.Key != e.Key || back.ETag != e.ETag || back.UserMeta["mtime"] != "1" || !back.LastModified.Equal(e.LastModified) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if _, err := FromMeta(map[string]string{"Other": "x"}); err == nil {
		t.Fatal("a replica without the entry was accepted")
	}
}

func FuzzKeysRoundTrip(f *testing.F) {
	f.Add("../a//b%2F")
	f.Fuzz(func(t *testing.T, key string) {
		s := NewStore(kv.NewMem(), "harvest/")
		if _, err := s.Replace(ctx, entry(key), 0); err != nil {
			return // refused keys are fine
		}
		e, err := s.Get(ctx, "data", key)
		if err != nil || e.Key != key {
			t.Fatalf("%q came back as %q (%v)", key, e.Key, err)
		}
	})
}
