//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	blobkv "github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/front"
)

// declPrefix keeps this test's state apart from the other blob tests'
// (catalogue, buckets, node registry) and from the documents the drivers
// and the placer of the cluster read.
const declPrefix = "harvest-blob-decl/"

// TestBlobFrontHonoursTheDeclarations: with a policy document at
// replicas 2 and a tenant declaring storage_mb 3000, both written to
// Consul KV as the placer stores them, a harvest-blob started over the
// cluster's MinIO servers (front config: replicas 3, capacity_mb 8192)
// shows the declared capacity on that tenant's node and the policy's
// default in /v1/status, and an object written into an untagged bucket
// lands on 2 nodes; a new declaration (storage_mb 2000) shows within the
// front's 10-second refresh. Bucket, object, documents and the prefix are
// removed.
func TestBlobFrontHonoursTheDeclarations(t *testing.T) {
	ctx := context.Background()
	consul := consulAPI(t, cluster.ConsulAddr())
	kv := blobkv.NewConsul(consul)
	store := history.NewStore(kv, declPrefix)
	if pairs, err := kv.List(ctx, declPrefix); err != nil || len(pairs) > 0 {
		t.Fatalf("%s is not empty (%d keys, %v): the test would mix with it", declPrefix, len(pairs), err)
	}
	t.Cleanup(func() {
		if _, err := consul.KV().DeleteTree(declPrefix, nil); err != nil {
			t.Errorf("delete %s: %v", declPrefix, err)
		}
	})
	declared := tenantOf(t, 0)
	storageMB, replicas := int64(3000), 2
	if err := store.PutDocument(ctx, declare.PolicyName, declare.Policy{Replicas: &replicas}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutDocument(ctx, declare.TenantDocument(declared), declare.Tenant{Environment: declared.Environment,
		Function: declared.Function, TenantValues: declare.TenantValues{StorageMB: &storageMB}}); err != nil {
		t.Fatal(err)
	}

	// a front of its own: config replicas 3 and 8192 MiB per node
	var nodes strings.Builder
	for i := range cluster.MinIO {
		clusterNodeBlock(i, 8192).write(&nodes)
	}
	addr, admin := fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(2)), fmt.Sprintf("http://127.0.0.1:%d", cluster.SparePort(3))
	config := filepath.Join(cluster.RunDir, "blob-declarations.hcl")
	if err := os.WriteFile(config, []byte(blobFrontHead(addr, strings.TrimPrefix(admin, "http://"))+fmt.Sprintf(`
replicas     = 3
consul {
  address = %q
  prefix  = %q
}
repair {
  health_interval = "1s"
}
timeouts {
  consul = "2s"
}
gc {
  grace = "25s"
}
%s`, cluster.ConsulAddr(), declPrefix, nodes.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	logPath, stop := startDaemonStoppable(t, blobBinary(), "agent", "-config", config)
	t.Cleanup(func() { noDataRace(t, logPath) })
	defer stop()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("harvest-blob does not serve after 15 s (log %s)", logPath)
		}
	}
	s3c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4("blob-access", "blob-secret-key-123", ""), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}

	// /v1/status: the declared capacity on the tenant's node(s), the
	// config's on the others, the policy's default; every node up
	var st api.BlobStatus
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		getJSON(t, admin, "/v1/status", &st)
		up := 0
		for _, n := range st.Nodes {
			if n.Up {
				up++
			}
		}
		if up == len(cluster.MinIO) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d storage nodes up after 20 s: %+v (log %s)", up, len(cluster.MinIO), st.Nodes, logPath)
		}
	}
	if st.Replicas != 2 || st.ReplicasFrom != "policy" {
		t.Fatalf("status replicas %d from %q, want the policy's 2 (log %s)", st.Replicas, st.ReplicasFrom, logPath)
	}
	declaredNodes := 0
	for _, n := range st.Nodes {
		want, from := int64(8192)<<20, "config"
		if n.Tenant == declared.String() {
			want, from = storageMB<<20, "tenant"
			declaredNodes++
		}
		if n.Capacity != want || n.CapacityFrom != from {
			t.Fatalf("node %s of %s: capacity %d bytes from %q, want %d from %q", n.ID, n.Tenant, n.Capacity, n.CapacityFrom, want, from)
		}
	}
	if declaredNodes == 0 {
		t.Fatalf("no node of %s in the status: %+v", declared, st.Nodes)
	}
	t.Logf("status: replicas %d from %s; %d node(s) of %s at %d MiB from the tenant's declaration, the others at 8192 MiB",
		st.Replicas, st.ReplicasFrom, declaredNodes, declared, storageMB)

	// an untagged bucket: 2 replicas, each on its node's MinIO
	bucket, key := uniqueName("decl"), "two-copies.bin"
	if err := s3c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("make bucket: %v (log %s)", err, logPath)
	}
	defer func() { // runs before stop: a failed test leaves nothing on the MinIO servers either
		_ = s3c.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{})
		_ = s3c.RemoveBucket(ctx, bucket)
	}()
	data := bytes.Repeat([]byte("declared "), 10_000)
	if _, err := s3c.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put: %v (log %s)", err, logPath)
	}
	e, err := catalog.NewStore(blobkv.NewConsul(consul), declPrefix).Get(ctx, bucket, key)
	if err != nil || len(e.Replicas) != 2 {
		t.Fatalf("catalogue entry %+v (%v): want 2 replicas", e, err)
	}
	stat := func(r catalog.Replica) (minio.ObjectInfo, error) {
		t.Helper()
		var i int
		if _, err := fmt.Sscanf(r.Node, "store-%d", &i); err != nil || i < 1 || i > len(cluster.MinIO) {
			t.Fatalf("replica on %q", r.Node)
		}
		m := cluster.MinIO[i-1]
		return minioClient(t, m, m.AccessKey, m.SecretKey).StatObject(ctx, front.DataBucket, r.Name, minio.StatObjectOptions{})
	}
	for _, r := range e.Replicas {
		if info, err := stat(r); err != nil || info.Size != int64(len(data)) {
			t.Fatalf("replica %s on %s: %+v %v", r.Name, r.Node, info, err)
		}
	}
	t.Logf("object in the untagged bucket on %s and %s", e.Replicas[0].Node, e.Replicas[1].Node)

	// a new declaration applies within the front's 10-second refresh
	storageMB = 2000
	if err := store.PutDocument(ctx, declare.TenantDocument(declared), declare.Tenant{Environment: declared.Environment,
		Function: declared.Function, TenantValues: declare.TenantValues{StorageMB: &storageMB}}); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	for deadline := changed.Add(15 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		getJSON(t, admin, "/v1/status", &st)
		seen := 0
		for _, n := range st.Nodes {
			if n.Tenant == declared.String() && n.Capacity == storageMB<<20 {
				seen++
			}
		}
		if seen == declaredNodes {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("storage_mb 2000 not in the status 15 s after the declaration changed: %+v (log %s)", st.Nodes, logPath)
		}
	}
	t.Logf("storage_mb 3000 -> 2000 in the status after %s", time.Since(changed).Round(100*time.Millisecond))

	// clean up through the front while it runs: replicas and the mirrored
	// bucket records go from the MinIO servers
	if err := s3c.RemoveObject(ctx, bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s3c.RemoveBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	// replicas are the garbage collector's: gone once older than its grace
	// (25 s); its pass comes a grace after the delete
	deleted := time.Now()
	for _, r := range e.Replicas {
		for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			_, err := stat(r)
			if minio.ToErrorResponse(err).Code == "NoSuchKey" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %s on %s 120 s after the delete: %v", r.Name, r.Node, err)
			}
		}
	}
	t.Logf("the garbage collector removed the deleted object's replicas %s after the delete", time.Since(deleted).Round(time.Second))
	// the front said what it applied, and no read of the documents failed
	logText, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"replicas=2 replicas_from=policy", "capacity_bytes=3145728000 from=tenant"} {
		if !strings.Contains(string(logText), want) {
			t.Errorf("the front's log does not say %q (log %s)", want, logPath)
		}
	}
	for _, line := range strings.Split(string(logText), "\n") {
		if strings.Contains(line, "cannot read the declarations") || strings.Contains(line, "[ERROR]") {
			t.Errorf("the front logged: %s", line)
		}
	}
	t.Logf("done in %s", time.Since(began).Round(time.Millisecond))
}
