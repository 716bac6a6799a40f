package front

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/kv/kvtest"
	"github.com/harvest-platform/harvest/storage/catalog"
)

func putBytes(t testing.TB, b *Backend, bucket, key string, data []byte) error {
	t.Helper()
	_, err := b.PutObject(context.Background(), s3response.PutObjectInput{Bucket: &bucket, Key: &key,
		ContentLength: ptr(int64(len(data))), Body: bytes.NewReader(data)})
	return err
}

func getBytes(t *testing.T, b *Backend, bucket, key string) []byte {
	t.Helper()
	out, err := b.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("reading %s/%s: %v", bucket, key, err)
	}
	return data
}

// everyReplicaOnItsNode fails the test unless each replica the key's entry
// names is on its node with the entry's bytes.
func everyReplicaOnItsNode(t *testing.T, b *Backend, stores map[string]*memNode, bucket, key string, want []byte) {
	t.Helper()
	e, err := b.cat.Get(context.Background(), bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range e.Replicas {
		if got := stores[r.Node].get(r.Name); !bytes.Equal(got, want) {
			t.Fatalf("replica %s on %s holds %d bytes, not the entry's %d", r.Name, r.Node, len(got), len(want))
		}
	}
}

func totalObjects(stores map[string]*memNode) int {
	n := 0
	for _, m := range stores {
		n += m.count()
	}
	return n
}

// TestAmbiguousCatalogueWritesServeTheOldOrTheNewVersionExactly: the
// catalogue's check-and-set commits and then answers an error, or fails
// without committing, or commits and then Consul is gone: every GET
// afterwards returns one of the versions written, byte for byte, every
// replica the entry names is on its node, and no replica that an entry may
// name was deleted inline.
func TestAmbiguousCatalogueWritesServeTheOldOrTheNewVersionExactly(t *testing.T) {
	faulty := kvtest.NewFaulty(kv.NewMem())
	b, stores, _ := declBackend(t, faulty)
	makeBucket(t, b, "data", nil)
	objects := "harvest/blob/objects/"
	v1, v2, v3, v4 := []byte("version one"), []byte("version two, longer"), []byte("version three"), []byte("version four!")
	if err := putBytes(t, b, "data", "k", v1); err != nil {
		t.Fatal(err)
	}

	// commit, then the answer is lost: the write reads back, finds itself
	faulty.Add(kvtest.Fault{Prefix: objects, Mode: kvtest.CommitThenError, Times: 1})
	if err := putBytes(t, b, "data", "k", v2); err != nil {
		t.Fatalf("a write that committed and lost its answer: %v", err)
	}
	if got := getBytes(t, b, "data", "k"); !bytes.Equal(got, v2) {
		t.Fatalf("after commit-then-error: %q", got)
	}
	everyReplicaOnItsNode(t, b, stores, "data", "k", v2)
	before := totalObjects(stores)

	// every check-and-set fails without committing: unconfirmed, the old
	// version stays, and the new replicas stay too (the GC's to judge)
	faulty.Add(kvtest.Fault{Prefix: objects, Mode: kvtest.ErrorWithoutCommit, Times: 1000})
	err := putBytes(t, b, "data", "k", v3)
	if err == nil || !strings.Contains(err.Error(), "could not be confirmed") {
		t.Fatalf("a write whose every commit failed: %v, want the unconfirmed ServiceUnavailable", err)
	}
	resetFaults(faulty)
	if got := getBytes(t, b, "data", "k"); !bytes.Equal(got, v2) {
		t.Fatalf("after failed commits: %q, want the old version", got)
	}
	if got := totalObjects(stores); got != before+3 {
		t.Fatalf("%d objects on the nodes, want %d (the unconfirmed write's 3 replicas left for the GC)", got, before+3)
	}

	// commit, then Consul is gone before the write can read back: the client
	// is told it is unconfirmed; it is in fact visible, and whole
	faulty.Add(kvtest.Fault{Prefix: objects, Mode: kvtest.CommitThenError, Times: 1, ThenFailReads: true})
	if err := putBytes(t, b, "data", "k", v4); err == nil {
		t.Fatal("a write that could not learn its fate was acknowledged")
	}
	faulty.FailReads(false)
	got := getBytes(t, b, "data", "k")
	if !bytes.Equal(got, v4) && !bytes.Equal(got, v2) {
		t.Fatalf("after commit-then-error with Consul gone: %q, neither version", got)
	}
	everyReplicaOnItsNode(t, b, stores, "data", "k", got)
	if testutil.ToFloat64(b.metrics.ambiguousWrites) < 3 {
		t.Fatalf("unconfirmed writes counted %v, want at least 3", testutil.ToFloat64(b.metrics.ambiguousWrites))
	}
}

// resetFaults disarms every fault.
func resetFaults(f *kvtest.Faulty) { f.Reset() }

// TestDeleteIsCheckAndSetAndLeavesATombstone: a delete removes the entry,
// leaves a tombstone naming the deleted version's replicas, and deletes
// no replica itself (the GC does, after its grace).
func TestDeleteIsCheckAndSetAndLeavesATombstone(t *testing.T) {
	mem := kv.NewMem()
	b, stores, _ := declBackend(t, mem)
	makeBucket(t, b, "data", nil)
	if err := putBytes(t, b, "data", "gone", []byte("soon deleted")); err != nil {
		t.Fatal(err)
	}
	e, _ := b.cat.Get(context.Background(), "data", "gone")
	if _, err := b.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: ptr("data"), Key: ptr("gone")}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.cat.Get(context.Background(), "data", "gone"); err != catalog.ErrNotFound {
		t.Fatalf("after delete: %v", err)
	}
	tombs, err := b.cat.Tombstones(context.Background())
	if err != nil || len(tombs) != 1 {
		t.Fatalf("tombstones: %v %v", tombs, err)
	}
	for _, tomb := range tombs {
		if !tomb.Buries(e.Replicas[0].Name, e.LastModified) {
			t.Fatalf("the tombstone %+v does not bury the deleted version %s", tomb, e.Replicas[0].Name)
		}
	}
	for _, r := range e.Replicas {
		if !stores[r.Node].has(r.Name) {
			t.Fatalf("the delete removed a replica on %s itself", r.Node)
		}
	}
}

// TestCorruptAndMissingReplicasAreSkippedThenScrubbedAndRepaired: with one
// replica's bytes flipped and another deleted on its node, a GET returns
// the original bytes (both counted); one scrub pass drops the two and the
// repairer re-creates them, each new copy checked, so the entry names
// three good replicas again with the layout it was written with.
func TestCorruptAndMissingReplicasAreSkippedThenScrubbedAndRepaired(t *testing.T) {
	mem := kv.NewMem()
	b, stores, _ := declBackend(t, mem)
	ctx := context.Background()
	makeBucket(t, b, "data", nil)
	data := bytes.Repeat([]byte("harvest "), 400_000) // 3.2 MB: four blocks
	if err := putBytes(t, b, "data", "k", data); err != nil {
		t.Fatal(err)
	}
	before, _ := b.cat.Get(ctx, "data", "k")
	if len(before.Layout) != 1 || len(before.Replicas) != 3 {
		t.Fatalf("entry %+v", before)
	}
	// the GET starts at the replica of least cost, in entry order on a tie
	// (no node has served a read yet, none has a read in flight):
	// corrupt the first in the second block, delete the second
	bad, gone := before.Replicas[0], before.Replicas[1]
	corrupt := bytes.Clone(data)
	corrupt[1<<20+5] ^= 0xff
	stores[bad.Node].set(bad.Name, corrupt)
	stores[gone.Node].set(gone.Name, nil)
	if got := getBytes(t, b, "data", "k"); !bytes.Equal(got, data) {
		t.Fatalf("GET with a corrupt and a missing replica returned %d bytes, not the original", len(got))
	}
	if testutil.ToFloat64(b.metrics.corruptReads) != 1 {
		t.Fatalf("corrupt reads counted %v, want 1", testutil.ToFloat64(b.metrics.corruptReads))
	}
	if testutil.ToFloat64(b.metrics.missingReads) != 1 || b.upkeep.Suspects() != 2 {
		t.Fatalf("missing reads %v, %d replicas queued for the scrubber; want 1 and both bad ones",
			testutil.ToFloat64(b.metrics.missingReads), b.upkeep.Suspects())
	}
	// a ranged read that starts in the bad block is served too
	out, err := b.GetObject(ctx, &s3.GetObjectInput{Bucket: ptr("data"), Key: ptr("k"), Range: ptr("bytes=1048576-1048600")})
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(part, data[1<<20:1<<20+25]) {
		t.Fatalf("ranged read: %q", part)
	}

	rep, err := b.upkeep.ScrubPass(ctx)
	if err != nil || rep.Corrupt != 1 || rep.Missing != 1 || rep.Dropped != 2 {
		t.Fatalf("scrub: %+v %v", rep, err)
	}
	if err := b.upkeep.RepairScan(ctx); err != nil {
		t.Fatal(err)
	}
	after, _ := b.cat.Get(ctx, "data", "k")
	if len(after.Replicas) != 3 || after.Layout[0] != before.Layout[0] || after.ETag != before.ETag {
		t.Fatalf("after scrub and repair: %+v", after)
	}
	for _, r := range after.Replicas {
		if r.Name != before.Replicas[2].Name && r.Name == bad.Name {
			t.Fatalf("a repaired copy reuses the bad replica's name %+v", r)
		}
		if r == bad || r == gone {
			t.Fatalf("the entry still names a bad replica %+v", r)
		}
	}
	everyReplicaOnItsNode(t, b, stores, "data", "k", data)
	if rep, _ := b.upkeep.ScrubPass(ctx); rep.Corrupt != 0 || rep.Missing != 0 || rep.Replicas != 3 {
		t.Fatalf("a second scrub: %+v", rep)
	}
}

// A node that stores other bytes than the front sent (its ETag, the MD5 it
// computed, is not the body's) fails the write: the client is told, no
// entry names the object, and no node keeps a replica, the damaged one
// included.
func TestPutRefusesAReplicaStoredDamaged(t *testing.T) {
	b, stores, _ := declBackend(t, kv.NewMem())
	makeBucket(t, b, "damaged", nil)
	data := bytes.Repeat([]byte("harvest"), 100_000)
	before := totalObjects(stores)                        // the nodes' markers
	stores["na"].damage, stores["nb"].damage = true, true // of four nodes, R=3 takes one of them at least
	if err := putBytes(t, b, "damaged", "k", data); err == nil {
		t.Fatal("a PUT with a replica stored damaged succeeded")
	}
	if _, err := b.cat.Get(context.Background(), "damaged", "k"); err == nil {
		t.Fatal("the catalogue names an object whose write failed")
	}
	deadline := time.Now().Add(10 * time.Second)
	for totalObjects(stores) > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d replicas left on the nodes after a failed write", totalObjects(stores)-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, m := range stores {
		m.damage = false
	}
	if err := putBytes(t, b, "damaged", "k", data); err != nil {
		t.Fatal(err)
	}
	everyReplicaOnItsNode(t, b, stores, "damaged", "k", data)
}

// A read whose every replica fails for its node's own trouble (SlowDown from
// nodes restarting or full) waits and tries them again instead of failing;
// one whose node dies in the middle of the answer goes on from the block
// where it stopped (a ranged read), after waiting for the others too.
func TestReadsWaitOutNodesThatRestartAndResumeMidObject(t *testing.T) {
	mem := kv.NewMem()
	b, stores, _ := declBackend(t, mem)
	makeBucket(t, b, "data", nil)
	data := bytes.Repeat([]byte("harvest "), 400_000) // 3.2 MB: four blocks
	if err := putBytes(t, b, "data", "k", data); err != nil {
		t.Fatal(err)
	}
	e, _ := b.cat.Get(context.Background(), "data", "k")
	for _, r := range e.Replicas {
		stores[r.Node].fail(1)
	}
	if got := getBytes(t, b, "data", "k"); !bytes.Equal(got, data) {
		t.Fatalf("GET with every node answering SlowDown once returned %d bytes, not the object", len(got))
	}
	if n := testutil.ToFloat64(b.metrics.readRetries); n != 1 {
		t.Fatalf("read retries %v, want 1", n)
	}

	// the first replica's node dies 1.5 MiB into its answer, the others are
	// still refusing calls: the read waits, then goes on from block 2
	first := e.Replicas[0]
	for _, r := range e.Replicas {
		stores[r.Node].fail(1)
	}
	stores[first.Node].fail(0)
	stores[first.Node].cut(3 << 19)
	if got := getBytes(t, b, "data", "k"); !bytes.Equal(got, data) {
		t.Fatalf("GET whose node died mid-answer returned %d bytes, not the object", len(got))
	}
	resumed := false
	for _, r := range e.Replicas {
		for _, h := range stores[r.Node].rangesSeen() {
			if strings.HasPrefix(h, "bytes=1048576-") {
				resumed = true
			}
		}
	}
	if !resumed {
		t.Fatal("no node was asked for the object from its second block on")
	}
	if n := testutil.ToFloat64(b.metrics.readRetries); n != 2 {
		t.Fatalf("read retries %v, want 2", n)
	}
}
