//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/internal/localcluster"
	blobkv "github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// storeMinIO is the MinIO server behind storage node "store-N".
func storeMinIO(t *testing.T, node string) *localcluster.MinIOServer {
	t.Helper()
	var i int
	if _, err := fmt.Sscanf(node, "store-%d", &i); err != nil || i < 1 || i > len(cluster.MinIO) {
		t.Fatalf("no MinIO behind %q", node)
	}
	return &cluster.MinIO[i-1]
}

// dataset is what the fault test wrote and must read back unchanged.
type dataset map[string]struct {
	data []byte
	info minio.ObjectInfo
}

func (d dataset) put(t *testing.T, c *minio.Client, bucket, key string, size int) {
	t.Helper()
	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(size),
		minio.PutObjectOptions{PartSize: 8 << 20, UserMetadata: map[string]string{"case": key}}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	info, err := c.StatObject(context.Background(), bucket, key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d[key] = struct {
		data []byte
		info minio.ObjectInfo
	}{data, info}
}

// check reads every object back: same bytes, ETag, Last-Modified, metadata.
func (d dataset) check(t *testing.T, c *minio.Client, bucket, when string) {
	t.Helper()
	var listed int
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("%s: list: %v", when, o.Err)
		}
		listed++
	}
	if listed != len(d) {
		t.Fatalf("%s: %d objects listed, want %d", when, listed, len(d))
	}
	for k, want := range d {
		obj, err := c.GetObject(context.Background(), bucket, k, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		if err != nil || !bytes.Equal(got, want.data) {
			t.Fatalf("%s: %s read back %d bytes of %d (%v)", when, k, len(got), len(want.data), err)
		}
		info, err := c.StatObject(context.Background(), bucket, k, minio.StatObjectOptions{})
		if err != nil || info.ETag != want.info.ETag || !info.LastModified.Equal(want.info.LastModified) || info.UserMetadata["Case"] != k {
			t.Fatalf("%s: %s is %s %s %v, was %s %s (%v)", when, k, info.ETag, info.LastModified, info.UserMetadata,
				want.info.ETag, want.info.LastModified, err)
		}
	}
}

// gatedReader gives its first half, then waits for the gate.
type gatedReader struct {
	r      io.Reader
	left   int
	gate   chan struct{}
	halted chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.left <= 0 {
		if g.halted != nil {
			close(g.halted)
			g.halted = nil
		}
		<-g.gate
		return g.r.Read(p)
	}
	n, err := g.r.Read(p[:min(len(p), g.left)])
	g.left -= n
	return n, err
}

// TestBlobLosesNothingToKilledNodesReimagesOrFrontRestarts: a storage node
// killed during an upload fails it cleanly; a node whose data directory is
// wiped (a reimage) is noticed by its identity marker and every replica it
// held is re-created elsewhere; a restarted front serves the same catalogue;
// a catalogue rebuilt from the nodes alone serves the same objects.
func TestBlobLosesNothingToKilledNodesReimagesOrFrontRestarts(t *testing.T) {
	f := startBlob(t)
	ctx := context.Background()
	if err := f.s3.MakeBucket(ctx, "faults", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v (log %s)", err, f.log)
	}
	d := dataset{}
	for i, size := range []int{0, 1, 4 << 10, 300 << 10, 1 << 20, 3 << 20, 5 << 20, 2 << 10, 7, 20 << 20} {
		d.put(t, f.s3, "faults", fmt.Sprintf("set/%02d.bin", i), size)
	}
	kv := blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr()))

	// Kill a replica node in the middle of a multipart upload.
	body := &gatedReader{r: io.LimitReader(randReader{}, 40<<20), left: 20 << 20, gate: make(chan struct{}), halted: make(chan struct{})}
	result := make(chan error, 1)
	halted := body.halted // the reader clears its field once it has halted
	go func() {
		_, err := f.s3.PutObject(ctx, "faults", "interrupted.bin", body, 40<<20, minio.PutObjectOptions{PartSize: 8 << 20})
		result <- err
	}()
	<-halted
	pairs, err := kv.List(ctx, "harvest/blob/uploads/faults/")
	if err != nil || len(pairs) != 1 {
		t.Fatalf("uploads in progress: %d (%v)", len(pairs), err)
	}
	var up struct{ Nodes []string }
	if err := json.Unmarshal(pairs[0].Value, &up); err != nil || len(up.Nodes) != 3 {
		t.Fatalf("upload record %s: %v", pairs[0].Value, err)
	}
	victim := storeMinIO(t, up.Nodes[1])
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	close(body.gate)
	if err := <-result; err == nil {
		e, err := catalog.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), "harvest/").Get(ctx, "faults", "interrupted.bin")
		if err != nil || len(e.Replicas) != 3 || e.HasReplicaOn(up.Nodes[1]) {
			t.Fatalf("upload acknowledged with a replica node dead: %+v %v", e, err)
		}
		t.Log("the upload completed on three live nodes")
	} else {
		t.Logf("the upload failed cleanly: %v", err)
		if _, err := f.s3.StatObject(ctx, "faults", "interrupted.bin", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Fatalf("a failed upload is visible: %v", err)
		}
		if left, _ := kv.List(ctx, "harvest/blob/uploads/faults/"); len(left) != 0 {
			t.Fatalf("a failed upload left its record: %s", left[0].Key)
		}
	}
	d.check(t, f.s3, "faults", "with a node killed")
	if err := cluster.Restart(victim.Name); err != nil {
		t.Fatal(err)
	}
	waitBlob(t, f, "the killed node back up", func(st blobState) bool { return st.up == len(cluster.MinIO) })

	// Reimage the node holding the most replicas: stop it, wipe its disk, start it.
	store := catalog.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), "harvest/")
	held := map[string]int{}
	for k := range d {
		e, err := store.Get(ctx, "faults", k)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range e.Replicas {
			held[r.Node]++
		}
	}
	reimaged := ""
	for n, c := range held {
		if reimaged == "" || c > held[reimaged] {
			reimaged = n
		}
	}
	reimage(t, reimaged)
	t.Logf("reimaged %s, which held %d of the %d objects' replicas", reimaged, held[reimaged], len(d))
	waitBlob(t, f, "repair after the reimage", func(st blobState) bool {
		return st.repaired >= held[reimaged] && st.under == 0 && st.up == len(cluster.MinIO)
	})
	for k := range d {
		e, _ := store.Get(ctx, "faults", k)
		if len(e.Replicas) != 3 {
			t.Fatalf("%s has %d replicas after the repair", k, len(e.Replicas))
		}
	}
	d.check(t, f.s3, "faults", "after the repair")
	out, err := exec.Command(filepath.Join(bin, "harvestctl"), "blob", "status", "-blob-admin-addr", f.admin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "under-replicated 0") || !strings.Contains(string(out), reimaged) {
		t.Fatalf("harvestctl blob status: %v\n%s", err, out)
	}
	t.Logf("harvestctl blob status:\n%s", out)
	explainObject(t, f, store, "faults", "set/03.bin")

	// Restart the front: the catalogue is intact.
	f.stop()
	f = startBlob(t)
	d.check(t, f.s3, "faults", "after a restart of the front")

	// Lose the catalogue: rebuild it from the nodes alone.
	f.stop()
	for _, prefix := range []string{"harvest/blob/objects/", "harvest/blob/buckets/"} {
		if _, err := consulAPI(t, cluster.ConsulAddr()).KV().DeleteTree(prefix, nil); err != nil {
			t.Fatal(err)
		}
	}
	out, err = exec.Command(filepath.Join(bin, "harvest-blob"), "rebuild", "-config", f.config).CombinedOutput()
	if err != nil {
		t.Fatalf("harvest-blob rebuild: %v\n%s", err, out)
	}
	t.Logf("harvest-blob rebuild: %s", out)
	f = startBlob(t)
	d.check(t, f.s3, "faults", "after rebuilding the catalogue from the nodes")
}

// reimage stops storage node "store-N", wipes its disk and starts it again.
func reimage(t *testing.T, node string) {
	t.Helper()
	m := storeMinIO(t, node)
	if err := cluster.Stop(m.Name); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(m.DataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(m.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Restart(m.Name); err != nil {
		t.Fatal(err)
	}
}

type randReader struct{}

func (randReader) Read(p []byte) (int, error) { return rand.Read(p) }

// blobState is what waitBlob looks at.
type blobState struct{ up, under, repaired int }

func waitBlob(t *testing.T, f *blobFront, what string, ok func(blobState) bool) {
	t.Helper()
	var st blobState
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		s := f.status(t)
		st = blobState{under: s.UnderReplicated, repaired: int(s.Repaired)}
		for _, n := range s.Nodes {
			if n.Up {
				st.up++
			}
		}
		if ok(st) {
			return
		}
	}
	t.Fatalf("%s: still %+v after 90 s (log %s)", what, st, f.log)
}

// explainObject checks `harvestctl explain object`: with the admin token it
// names every replica node of the catalogue's entry, all readable; without
// it the front refuses (object names are data).
func explainObject(t *testing.T, f *blobFront, store *catalog.Store, bucket, key string) {
	t.Helper()
	e, err := store.Get(context.Background(), bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "harvestctl"), "explain", "object", "-blob-admin-addr", f.admin, bucket, key)
	cmd.Env = append(os.Environ(), "HARVEST_BLOB_ADMIN_TOKEN=acceptance-blob-admin-7c2e")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("of %d replicas readable now", len(e.Replicas))) {
		t.Fatalf("harvestctl explain object: %v\n%s", err, out)
	}
	for _, r := range e.Replicas {
		if !strings.Contains(string(out), r.Node) {
			t.Fatalf("harvestctl explain object does not name replica node %s:\n%s", r.Node, out)
		}
	}
	t.Logf("harvestctl explain object:\n%s", out)
	cmd = exec.Command(filepath.Join(bin, "harvestctl"), "explain", "object", "-blob-admin-addr", f.admin, bucket, key)
	cmd.Env = append(os.Environ(), "HARVEST_BLOB_ADMIN_TOKEN=")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "401") {
		t.Fatalf("harvestctl explain object without a token: %v\n%s", err, out)
	}
}
