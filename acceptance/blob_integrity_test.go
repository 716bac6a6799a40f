//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	blobkv "github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/front"
	"github.com/harvest-platform/harvest/storage/objects"
)

// spoil corrupts one replica in place on its MinIO (one byte flipped, as
// a disk's silent error would leave it) and deletes another there.
func spoil(t *testing.T, bad, gone catalog.Replica, data []byte) {
	t.Helper()
	ctx := context.Background()
	corrupt := bytes.Clone(data)
	corrupt[1<<20+5] ^= 0xff
	if _, err := nodeCore(t, bad.Node).Client.PutObject(ctx, front.DataBucket, bad.Name, bytes.NewReader(corrupt), int64(len(corrupt)),
		minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := nodeCore(t, gone.Node).Client.RemoveObject(ctx, front.DataBucket, gone.Name, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitGoodReplicas waits until the entry names three replicas, none of
// them in avoid, each holding exactly the object's bytes on its MinIO, with
// the layout and ETag it was written with.
func waitGoodReplicas(t *testing.T, f *blobFront, store *catalog.Store, key string, want catalog.Entry, sum [32]byte, avoid ...catalog.Replica) catalog.Entry {
	t.Helper()
	ctx := context.Background()
	var e catalog.Entry
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		var err error
		if e, err = store.Get(ctx, "scrubbed", key); err != nil || len(e.Replicas) != 3 {
			continue
		}
		good := 0
		for _, r := range e.Replicas {
			obj, err := nodeCore(t, r.Node).Client.GetObject(ctx, front.DataBucket, r.Name, minio.GetObjectOptions{})
			if err != nil {
				break
			}
			data, err := io.ReadAll(obj)
			if err == nil && sha256.Sum256(data) == sum && !containsReplica(avoid, r) {
				good++
			}
		}
		if good == 3 {
			lw, _ := json.Marshal(want.Layout)
			le, _ := json.Marshal(e.Layout)
			if !bytes.Equal(lw, le) || e.ETag != want.ETag || e.Version != want.Version {
				t.Fatalf("the entry's checksums changed: layout %s etag %s, was %s %s", le, e.ETag, lw, want.ETag)
			}
			return e
		}
	}
	t.Fatalf("%s: entry %+v has not three good replicas after 90 s (log %s)", key, e.Replicas, f.log)
	return e
}

func containsReplica(rs []catalog.Replica, r catalog.Replica) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// TestBlobScrubAndReadsRecoverCorruptAndMissingReplicas: one replica's
// bytes corrupted and another deleted on their MinIO servers. One scrub
// pass finds both and the repairer restores three good replicas with the
// original checksums; done again, a GET returns the original bytes (the
// bad replicas it met counted in the metrics), the replicas it found bad
// are scrubbed and repaired the same way, and a scrub pass the one it may
// not have met.
func TestBlobScrubAndReadsRecoverCorruptAndMissingReplicas(t *testing.T) {
	f := startBlob(t)
	defer f.stop()
	ctx := context.Background()
	if err := f.s3.MakeBucket(ctx, "scrubbed", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v (log %s)", err, f.log)
	}
	data := make([]byte, 3<<20+12345)
	_, _ = rand.Read(data)
	sum := sha256.Sum256(data)
	if _, err := f.s3.PutObject(ctx, "scrubbed", "k", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put: %v (log %s)", err, f.log)
	}
	store := catalog.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), "harvest/")
	written, err := store.Get(ctx, "scrubbed", "k")
	if err != nil || len(written.Replicas) != 3 || len(written.Layout) != 1 {
		t.Fatalf("entry %+v %v", written, err)
	}

	// the scrubber finds them
	spoil(t, written.Replicas[0], written.Replicas[1], data)
	var rep api.ScrubReport
	f.post(t, "/v1/scrub", &rep)
	t.Logf("scrub: %+v", rep)
	if rep.Corrupt < 1 || rep.Missing < 1 || rep.Dropped < 2 {
		t.Fatalf("the scrub found %d corrupt, %d missing, dropped %d; want 1, 1, 2 (log %s)", rep.Corrupt, rep.Missing, rep.Dropped, f.log)
	}
	repaired := waitGoodReplicas(t, f, store, "k", written, sum, written.Replicas[0], written.Replicas[1])

	// a read finds them, and still returns the original bytes
	spoil(t, repaired.Replicas[0], repaired.Replicas[1], data)
	corruptBefore, missingBefore := f.metric(t, "harvest_blob_corrupt_replica_reads_total"), f.metric(t, "harvest_blob_missing_replica_reads_total")
	// a read starts at the replica of least cost (its node's recent time
	// to first byte times its reads in flight: storage/nodes/readchoice.go), so it may
	// start at the good one and never meet a bad one: read until one does
	// (each read must return the original bytes). A node that serves no
	// read sees its cost decay (by e every 10 s), so in time one is met.
	var corrupt, missing float64
	deadline := time.Now().Add(90 * time.Second)
	for try := 1; ; try++ {
		obj, err := f.s3.GetObject(ctx, "scrubbed", "k", minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || sha256.Sum256(got) != sum {
			t.Fatalf("GET with a corrupt and a missing replica: %d bytes, %v (log %s)", len(got), err, f.log)
		}
		corrupt, missing = f.metric(t, "harvest_blob_corrupt_replica_reads_total"), f.metric(t, "harvest_blob_missing_replica_reads_total")
		if corrupt+missing > corruptBefore+missingBefore {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bad replicas met by %d reads over 90 s not counted: corrupt %v -> %v, missing %v -> %v", try, corruptBefore, corrupt, missingBefore, missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("read around them: corrupt reads %v -> %v, missing reads %v -> %v", corruptBefore, corrupt, missingBefore, missing)
	if corrupt == corruptBefore || missing == missingBefore {
		// the read went on from the bad replica it met to a good one, which
		// may not be the other bad one: a scrub pass finds that one
		f.post(t, "/v1/scrub", &rep)
		t.Logf("the bad replica no read met, scrubbed: %+v", rep)
	}
	waitGoodReplicas(t, f, store, "k", written, sum, repaired.Replicas[0], repaired.Replicas[1])
}

// TestBlobRefusesPartsBeyondTheDeclaredStorage: every tenant declares
// storage_mb = 64; three 100 MiB multipart uploads (16 MiB parts, sent at
// once) are each refused at an UploadPart with XMinioStorageFull (507), at
// the peak no node holds more than 64 MiB of the deployment's parts and
// objects, and after the clients abort nothing is held.
func TestBlobRefusesPartsBeyondTheDeclaredStorage(t *testing.T) {
	const prefix, capMB = "harvest-blob-cap/", 64
	ctx := context.Background()
	ownPrefix(t, prefix)
	store := history.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), prefix)
	for i := range cluster.MinIO {
		id := tenantOf(t, i)
		mb := int64(capMB)
		if err := store.PutDocument(ctx, declare.TenantDocument(id), declare.Tenant{Environment: id.Environment, Function: id.Function,
			TenantValues: declare.TenantValues{StorageMB: &mb}}); err != nil {
			t.Fatal(err)
		}
	}
	f := startPrefixedBlob(t, prefix, "")
	defer f.stop()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		st, ok := f.status(t), 0
		for _, n := range st.Nodes {
			if n.Up && n.Capacity == capMB<<20 && n.CapacityFrom == "tenant" {
				ok++
			}
		}
		if ok == len(cluster.MinIO) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes not up at %d MiB: %+v (log %s)", capMB, st.Nodes, f.log)
		}
	}
	if err := f.s3.MakeBucket(ctx, "capped", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	core := minio.Core{Client: f.s3}
	type outcome struct {
		key, id     string
		parts       int
		refusedAt   int
		code        string
		status      int
		description string
	}
	outcomes := make([]outcome, 3)
	var wg sync.WaitGroup
	for i := range outcomes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outcomes[i]
			o.key = fmt.Sprintf("hundred-%d", i)
			var err error
			if o.id, err = core.NewMultipartUpload(ctx, "capped", o.key, minio.PutObjectOptions{}); err != nil {
				o.code = "create: " + err.Error()
				return
			}
			part := make([]byte, 16<<20)
			for n := 1; n <= 7; n++ {
				size := min(16<<20, 100<<20-(n-1)*16<<20)
				_, _ = rand.Read(part[:size])
				if _, err := core.PutObjectPart(ctx, "capped", o.key, o.id, n, bytes.NewReader(part[:size]), int64(size), minio.PutObjectPartOptions{}); err != nil {
					resp := minio.ToErrorResponse(err)
					o.refusedAt, o.code, o.status, o.description = n, resp.Code, resp.StatusCode, resp.Message
					return
				}
				o.parts = n
			}
		}()
	}
	wg.Wait()
	// what each node holds: the deployment's objects, and the parts of the
	// uploads its records name (MinIO lists uploads by object name only)
	folder := objects.ReplicaFolder(prefix)
	records, _, err := consulAPI(t, cluster.ConsulAddr()).KV().List(prefix+"blob/uploads/", nil)
	if err != nil || len(records) != 3 {
		t.Fatalf("%d upload records, want 3 (%v)", len(records), err)
	}
	for i := range cluster.MinIO {
		node := fmt.Sprintf("store-%d", i+1)
		c := nodeCore(t, node)
		var held int64
		for o := range c.Client.ListObjects(ctx, front.DataBucket, minio.ListObjectsOptions{Prefix: folder, Recursive: true}) {
			held += o.Size
		}
		for _, rec := range records {
			var u struct {
				Name    string            `json:"name"`
				Uploads map[string]string `json:"node_uploads"`
			}
			if err := json.Unmarshal(rec.Value, &u); err != nil {
				t.Fatal(err)
			}
			id, ok := u.Uploads[node]
			if !ok {
				continue
			}
			res, err := c.ListObjectParts(ctx, front.DataBucket, u.Name, id, 0, 1000)
			if err != nil {
				t.Fatalf("%s: parts of %s: %v", node, u.Name, err)
			}
			for _, p := range res.ObjectParts {
				held += p.Size
			}
		}
		t.Logf("%s holds %d MiB of the deployment's parts and objects at the peak", node, held>>20)
		if held > capMB<<20 {
			t.Errorf("%s holds %d bytes, beyond its declared %d MiB", node, held, capMB)
		}
	}
	for _, o := range outcomes {
		t.Logf("%s: %d parts stored, refused at part %d: %d %s %q", o.key, o.parts, o.refusedAt, o.status, o.code, o.description)
		if o.refusedAt == 0 || o.code != "XMinioStorageFull" || o.status != 507 {
			t.Errorf("%s was not refused at an UploadPart with XMinioStorageFull 507 (log %s)", o.key, f.log)
		}
		if o.id != "" {
			if err := core.AbortMultipartUpload(ctx, "capped", o.key, o.id); err != nil {
				t.Fatalf("abort %s: %v", o.key, err)
			}
		}
	}
	for _, n := range f.status(t).Nodes {
		if n.Used != 0 {
			t.Errorf("%s still holds %d bytes after every upload was aborted", n.ID, n.Used)
		}
	}
	if err := f.s3.RemoveBucket(ctx, "capped"); err != nil {
		t.Fatal(err)
	}
}
