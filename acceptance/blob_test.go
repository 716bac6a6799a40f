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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// startBlob runs harvest-blob as a real process over the cluster's MinIO
// servers (storage node "store-N" on client-N's MinIO, its tenant's) and
// returns an S3 client to it.
func startBlob(t *testing.T) (*minio.Client, string) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(2))
	var nodes strings.Builder
	for i, m := range cluster.MinIO {
		meta := cluster.NomadClients[i].Meta
		fmt.Fprintf(&nodes, "node %q {\n  endpoint = %q\n  access_key = %q\n  secret_key = %q\n  tenant = %q\n  environment = %q\n  rack = %q\n  capacity_mb = 1024\n}\n",
			fmt.Sprintf("store-%d", i+1), m.HTTPAddr, m.AccessKey, m.SecretKey, meta["harvest_tenant"], meta["harvest_environment"], meta["harvest_rack"])
	}
	config := filepath.Join(t.TempDir(), "blob.hcl")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`
log_level  = "DEBUG"
listen     = %q
access_key = "blob-access"
secret_key = "blob-secret-key-123"
replicas   = 3
consul {
  address = %q
}
%s`, addr, cluster.ConsulAddr(), nodes.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := startDaemon(t, "harvest-blob", "agent", "-config", config)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4("blob-access", "blob-secret-key-123", ""), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c, logPath
}

func setBusy(t *testing.T, node string, busy bool) {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"busy": busy})
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
	s3c, logPath := startBlob(t)
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

	// three replicas, on three nodes of three environments
	store := catalog.NewStore(history.NewConsulKV(consulAPI(t, cluster.ConsulAddr())), "harvest/")
	e, err := store.Get(ctx, "datasets", "a/b/two.bin")
	if err != nil || len(e.Replicas) != 3 {
		t.Fatalf("catalogue entry %+v %v", e, err)
	}
	envs := map[string]bool{}
	for _, r := range e.Replicas {
		var i int
		fmt.Sscanf(r.Node, "store-%d", &i)
		envs[cluster.NomadClients[i-1].Meta["harvest_environment"]] = true
	}
	if len(envs) != 3 {
		t.Fatalf("replicas %+v span %d environments", e.Replicas, len(envs))
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
