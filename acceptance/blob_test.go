//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	blobkv "github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// blobFront is a harvest-blob process over the cluster's MinIO servers
// (storage node "store-N" on client-N's MinIO, of its tenant).
type blobFront struct {
	s3     *minio.Client
	log    string
	addr   string
	admin  string
	config string
	stop   func()
	// endpoints replace store-N's MinIO address in a prefixed front's
	// configuration (writePrefixedBlobConfig), by N
	endpoints map[int]string
}

// blobConfig writes harvest-blob's configuration: fast health checks and
// no repair limit worth the name, so the tests see repairs within seconds.
//
// Six tenants fill at most six of the grid's nine cells, and with equal
// space a 3x3 grid of six gets two rows per column: no placement could
// keep rows distinct. So the declared capacities, by tenant ID, are 1, 1,
// 1, 2, 2, 4 units: column 0 holds three tenants (rows 0-2), column 1 two
// (rows 0 and 2), column 2 one (row 1), and every object has a fully
// diverse placement. Every tenant gets a history sample first, so all have
// the same reimage rate (none recorded) whatever the drivers wrote so far.
func blobConfig(t *testing.T, extra ...string) string {
	t.Helper()
	store := history.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), "")
	order := make([]int, len(cluster.MinIO))
	for i := range order {
		order[i] = i
		id, err := history.ParseTenantID(cluster.NomadClients[i].Meta["harvest_tenant"])
		if err != nil {
			t.Fatal(err)
		}
		if err := store.AppendSamples(context.Background(), id, []history.Sample{{Node: cluster.NomadClients[i].Name, Time: time.Now(), CPU: 10}}); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		return strings.Compare(cluster.NomadClients[a].Meta["harvest_tenant"], cluster.NomadClients[b].Meta["harvest_tenant"])
	})
	units := []int{1, 1, 1, 2, 2, 4}
	capacity := map[int]int{}
	for rank, i := range order {
		capacity[i] = 8192 * units[min(rank, len(units)-1)]
	}
	var nodes strings.Builder
	for i := range cluster.MinIO {
		clusterNodeBlock(i, capacity[i]).write(&nodes)
	}
	config := filepath.Join(cluster.RunDir, "blob.hcl")
	head := blobFrontHead(fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(2)), fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(3)))
	if err := os.WriteFile(config, []byte(head+fmt.Sprintf(`
replicas     = 3
consul {
  address = %q
}
repair {
  per_server_per_hour = 360000
  interval            = "2s"
  health_interval     = "1s"
  lost_after          = "30s"
}
%s
%s`, cluster.ConsulAddr(), nodes.String(), strings.Join(extra, "\n"))), 0o644); err != nil {
		t.Fatal(err)
	}
	return config
}

// blobBinary is the harvest-blob the tests run: HARVEST_BLOB_BIN (make
// test sets it to a build with the race detector), else bin/harvest-blob.
func blobBinary() string { return envOr("HARVEST_BLOB_BIN", "harvest-blob") }

// startBlob runs harvest-blob as a real process and waits until it serves;
// extra is more of its HCL configuration. When the test ends, the front's
// log must hold no data race report.
func startBlob(t *testing.T, extra ...string) *blobFront {
	t.Helper()
	f := &blobFront{addr: fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(2)),
		admin: fmt.Sprintf("http://127.0.0.1:%d", cluster.SparePort(3)), config: blobConfig(t, extra...)}
	f.log, f.stop = startDaemonStoppable(t, blobBinary(), "agent", "-config", f.config)
	t.Cleanup(func() { noDataRace(t, f.log) })
	for i := 0; i < 150; i++ {
		if c, err := net.Dial("tcp", f.addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	c, err := minio.New(f.addr, &minio.Options{Creds: credentials.NewStaticV4("blob-access", "blob-secret-key-123", ""), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.s3 = c
	return f
}

// noDataRace fails the test when a front's log reports a data race.
func noDataRace(t *testing.T, logPath string) {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Errorf("reading %s: %v", logPath, err)
		return
	}
	if i := bytes.Index(data, []byte("WARNING: DATA RACE")); i >= 0 {
		t.Errorf("harvest-blob reported a data race (log %s):\n%s", logPath, data[i:min(len(data), i+4000)])
	}
}

// status reads the front's /v1/status.
func (f *blobFront) status(t *testing.T) api.BlobStatus {
	t.Helper()
	var st api.BlobStatus
	getJSON(t, f.admin, "/v1/status", &st)
	return st
}

func setBusy(t *testing.T, node string, busy bool) {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"busy": busy, "updated": time.Now().UTC()})
	if _, err := consulAPI(t, cluster.ConsulAddr()).KV().Put(&consulapi.KVPair{Key: "harvest/busy/" + node, Value: data}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBlobFrontStoresReplicasDiverselyAndReadsAroundBusyNodes: objects
// written through harvest-blob with minio-go land on 3 nodes of distinct
// environments, read back byte-identical (whole and ranged), list with
// prefixes and delimiters (V1 and V2), keep their metadata, delete; a read
// avoids busy nodes and fails (retryably) only when all are busy.
func TestBlobFrontStoresReplicasDiverselyAndReadsAroundBusyNodes(t *testing.T) {
	f := startBlob(t)
	s3c, logPath := f.s3, f.log
	ctx := context.Background()
	if err := s3c.MakeBucket(ctx, "datasets", minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v (log %s)", err, logPath)
	}
	objects := map[string][]byte{"a/one.bin": make([]byte, 3<<10), "a/b/two.bin": make([]byte, 9<<20), "c.txt": []byte("hello")}
	for k, data := range objects {
		if _, err := rand.Read(data); err != nil && k != "c.txt" {
			t.Fatal(err)
		}
		if _, err := s3c.PutObject(ctx, "datasets", k, bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{UserMetadata: map[string]string{"origin": "acceptance"}, PartSize: 64 << 20}); err != nil {
			t.Fatalf("put %s: %v (log %s)", k, err, logPath)
		}
	}
	for k, data := range objects {
		obj, err := s3c.GetObject(ctx, "datasets", k, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("get %s: %d bytes back of %d (%v)", k, len(got), len(data), err)
		}
		st, err := s3c.StatObject(ctx, "datasets", k, minio.StatObjectOptions{})
		if err != nil || st.Size != int64(len(data)) || st.UserMetadata["Origin"] != "acceptance" {
			t.Fatalf("stat %s: %+v %v", k, st, err)
		}
	}
	opts := minio.GetObjectOptions{}
	_ = opts.SetRange(1000, 1999)
	obj, _ := s3c.GetObject(ctx, "datasets", "a/b/two.bin", opts)
	part, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(part, objects["a/b/two.bin"][1000:2000]) {
		t.Fatalf("ranged get: %d bytes (%v)", len(part), err)
	}
	for _, v1 := range []bool{false, true} {
		var keys []string
		for o := range s3c.ListObjects(ctx, "datasets", minio.ListObjectsOptions{Prefix: "a/", UseV1: v1}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			keys = append(keys, o.Key)
		}
		slices.Sort(keys) // a page lists its keys, then its common prefixes
		if strings.Join(keys, ",") != "a/b/,a/one.bin" {
			t.Fatalf("list (v1=%v) a/ with delimiter: %v", v1, keys)
		}
	}

	// a multipart upload above 64 MiB (minio-go, 16 MiB parts) and a copy
	big := make([]byte, 70<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	objects["big/seventy.bin"] = big
	if info, err := s3c.PutObject(ctx, "datasets", "big/seventy.bin", bytes.NewReader(big), int64(len(big)),
		minio.PutObjectOptions{PartSize: 16 << 20, UserMetadata: map[string]string{"origin": "multipart"}}); err != nil {
		t.Fatalf("multipart put: %v (log %s)", err, logPath)
	} else if !strings.HasSuffix(info.ETag, "-5") {
		t.Fatalf("multipart ETag %q, want the S3 form md5-of-parts-5", info.ETag)
	}
	if _, err := s3c.CopyObject(ctx, minio.CopyDestOptions{Bucket: "datasets", Object: "copies/seventy.bin"},
		minio.CopySrcOptions{Bucket: "datasets", Object: "big/seventy.bin"}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	objects["copies/seventy.bin"] = big
	for _, k := range []string{"big/seventy.bin", "copies/seventy.bin"} {
		obj, _ := s3c.GetObject(ctx, "datasets", k, minio.GetObjectOptions{})
		if got, err := io.ReadAll(obj); err != nil || !bytes.Equal(got, big) {
			t.Fatalf("get %s: %d bytes back of %d (%v)", k, len(got), len(big), err)
		}
	}
	if st, err := s3c.StatObject(ctx, "datasets", "copies/seventy.bin", minio.StatObjectOptions{}); err != nil || st.UserMetadata["Origin"] != "multipart" {
		t.Fatalf("copy kept metadata? %+v %v", st.UserMetadata, err)
	}

	// every object: three replicas, on nodes of three environments and of
	// grid cells with no row or column twice
	st := f.status(t)
	cells := map[string]api.BlobNode{}
	for _, n := range st.Nodes {
		cells[n.ID] = n
	}
	store := catalog.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), "harvest/")
	for k := range objects {
		e, err := store.Get(ctx, "datasets", k)
		if err != nil || len(e.Replicas) != 3 || e.Degraded {
			t.Fatalf("catalogue entry of %s: %+v %v", k, e, err)
		}
		envs, rows, cols := map[string]bool{}, map[int]bool{}, map[int]bool{}
		for _, r := range e.Replicas {
			n := cells[r.Node]
			envs[n.Environment], rows[n.Row], cols[n.Col] = true, true, true
		}
		if len(envs) != 3 || len(rows) != 3 || len(cols) != 3 {
			t.Fatalf("replicas of %s on %v: %d environments, %d rows, %d columns (nodes %+v)", k, e.Replicas, len(envs), len(rows), len(cols), st.Nodes)
		}
	}
	e, _ := store.Get(ctx, "datasets", "a/b/two.bin")

	// a bucket's policy, set with standard bucket tags: four replicas, in
	// four environments; a bad value is refused
	if err := s3c.MakeBucket(ctx, "four-copies", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	bad, _ := tags.NewTags(map[string]string{"harvest-replicas": "ten"}, false)
	if err := s3c.SetBucketTagging(ctx, "four-copies", bad); minio.ToErrorResponse(err).Code != "InvalidArgument" {
		t.Fatalf("harvest-replicas=ten: %v", err)
	}
	four, _ := tags.NewTags(map[string]string{"harvest-replicas": "4"}, false)
	if err := s3c.SetBucketTagging(ctx, "four-copies", four); err != nil {
		t.Fatal(err)
	}
	if _, err := s3c.PutObject(ctx, "four-copies", "x", bytes.NewReader([]byte("four")), 4, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if e4, err := store.Get(ctx, "four-copies", "x"); err != nil || len(e4.Replicas) != 4 {
		t.Fatalf("object in a harvest-replicas=4 bucket: %+v %v", e4, err)
	} else {
		envs := map[string]bool{}
		for _, r := range e4.Replicas {
			envs[cells[r.Node].Environment] = true
		}
		if len(envs) != 4 {
			t.Fatalf("four replicas in %d environments: %v", len(envs), e4.Replicas)
		}
	}

	// requests not signed with the front's credentials are refused
	stranger, _ := minio.New(f.addr, &minio.Options{Creds: credentials.NewStaticV4("blob-access", "not-the-secret", ""), MaxRetries: 1})
	if _, err := stranger.ListBuckets(ctx); minio.ToErrorResponse(err).Code != "SignatureDoesNotMatch" {
		t.Fatalf("a bad signature: %v", err)
	}
	if resp, err := http.Get("http://" + f.addr + "/datasets/c.txt"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an unsigned GET: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// busy nodes are avoided; when every replica is busy the read fails
	t.Cleanup(func() {
		for _, r := range e.Replicas {
			setBusy(t, r.Node, false)
		}
	})
	setBusy(t, e.Replicas[0].Node, true)
	setBusy(t, e.Replicas[1].Node, true)
	time.Sleep(3 * time.Second) // the front reads flags every 2 s
	obj, _ = s3c.GetObject(ctx, "datasets", "a/b/two.bin", minio.GetObjectOptions{})
	if got, err := io.ReadAll(obj); err != nil || !bytes.Equal(got, objects["a/b/two.bin"]) {
		t.Fatalf("read with two replicas busy: %d bytes, %v", len(got), err)
	}
	setBusy(t, e.Replicas[2].Node, true)
	time.Sleep(3 * time.Second)
	obj, _ = s3c.GetObject(ctx, "datasets", "a/b/two.bin", minio.GetObjectOptions{})
	if _, err := io.ReadAll(obj); err == nil || minio.ToErrorResponse(err).Code != "SlowDown" {
		t.Fatalf("read with every replica busy: %v, want SlowDown", err)
	}

	if err := s3c.RemoveObject(ctx, "datasets", "c.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s3c.StatObject(ctx, "datasets", "c.txt", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Fatalf("after delete: %v", err)
	}
}
