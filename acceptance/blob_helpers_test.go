//go:build acceptance

package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/front"
)

// fastGC is front configuration for tests that wait for the garbage
// collector: the shortest grace the front accepts with a 2 s Consul
// timeout (twice the commit window of six timeouts), passes on demand.
const fastGC = `
timeouts {
  consul = "2s"
}
gc {
  grace    = "25s"
  interval = "5s"
}`

// nodeCore is a client of the MinIO behind storage node "store-N".
func nodeCore(t *testing.T, node string) *minio.Core {
	t.Helper()
	m := storeMinIO(t, node)
	c, err := minio.NewCore(m.HTTPAddr, &minio.Options{Creds: credentials.NewStaticV4(m.AccessKey, m.SecretKey, ""), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// metric reads one sample of the front's /v1/metrics (the sum over labels).
func (f *blobFront) metric(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(f.admin + "/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// post calls one of the front's POST admin endpoints and decodes its answer.
func (f *blobFront) post(t *testing.T, path string, out any) {
	t.Helper()
	resp, err := http.Post(f.admin+path, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
}

// orphans lists, on every storage node, the replicas of the deployment at
// prefix that no catalogue entry names there, and the node uploads no
// upload record holds. The nodes are listed before the catalogue is read.
func orphans(t *testing.T, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	folder := front.ReplicaFolder(prefix)
	type onNode struct{ node, name string }
	var objects []onNode
	var uploads []string
	for i := range cluster.MinIO {
		node := "store-" + strconv.Itoa(i+1)
		c := nodeCore(t, node)
		for o := range c.Client.ListObjects(ctx, front.DataBucket, minio.ListObjectsOptions{Prefix: folder, Recursive: true}) {
			if o.Err != nil {
				t.Fatalf("listing %s: %v", node, o.Err)
			}
			objects = append(objects, onNode{node, o.Key})
		}
		for u := range c.Client.ListIncompleteUploads(ctx, front.DataBucket, folder, true) {
			if u.Err != nil {
				t.Fatalf("listing %s's uploads: %v", node, u.Err)
			}
			uploads = append(uploads, node+" upload "+u.UploadID+" of "+u.Key)
		}
	}
	consul := consulAPI(t, cluster.ConsulAddr()).KV()
	refs := map[onNode]bool{}
	pairs, _, err := consul.List(prefix+"blob/objects/", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		var e catalog.Entry
		if err := json.Unmarshal(p.Value, &e); err != nil {
			t.Fatal(err)
		}
		for _, r := range e.Replicas {
			refs[onNode{r.Node, r.Name}] = true
		}
	}
	open, _, err := consul.List(prefix+"blob/uploads/", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objects {
		if !refs[o] {
			out = append(out, o.node+" "+o.name)
		}
	}
	if len(open) == 0 {
		out = append(out, uploads...)
	}
	return out
}

// waitNoOrphans waits (running GC passes) until nothing of the deployment
// at prefix is left unreferenced on the nodes.
func waitNoOrphans(t *testing.T, f *blobFront, prefix string, limit time.Duration) {
	t.Helper()
	began := time.Now()
	var left []string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		var rep front.GCReport
		f.post(t, "/v1/gc", &rep)
		if left = orphans(t, prefix); len(left) == 0 {
			t.Logf("no orphan left %s after the last write (last GC pass: %+v)", time.Since(began).Round(time.Second), rep)
			return
		}
	}
	t.Fatalf("%d orphans after %s: %v (log %s)", len(left), limit, left[:min(len(left), 10)], f.log)
}
