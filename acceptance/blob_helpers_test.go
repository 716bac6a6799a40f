//go:build acceptance

package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/front"
	"github.com/harvest-platform/harvest/storage/objects"
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
	req, _ := http.NewRequest(http.MethodPost, f.admin+path, nil)
	req.Header.Set("Authorization", "Bearer "+blobAdminToken)
	resp, err := http.DefaultClient.Do(req)
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
	folder := objects.ReplicaFolder(prefix)
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
		// MinIO lists uploads by object name only: ask for each name a
		// retired upload of the deployment had
		for _, name := range retiredUploadNames(t, prefix) {
			for u := range c.Client.ListIncompleteUploads(ctx, front.DataBucket, name, false) {
				if u.Err != nil {
					t.Fatalf("listing %s's uploads: %v", node, u.Err)
				}
				uploads = append(uploads, node+" upload "+u.UploadID+" of "+u.Key)
			}
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

// uploadNames are the node names of the uploads the front recorded under
// prefix (set by the tests that start uploads; the finished records do not
// keep them).
var uploadNames sync.Map // prefix -> *[]string

func noteUpload(prefix, name string) {
	v, _ := uploadNames.LoadOrStore(prefix, &[]string{})
	*v.(*[]string) = append(*v.(*[]string), name)
}

func retiredUploadNames(t *testing.T, prefix string) []string {
	v, ok := uploadNames.Load(prefix)
	if !ok {
		return nil
	}
	return *v.(*[]string)
}

// waitNoOrphans waits (running GC passes) until nothing of the deployment
// at prefix is left unreferenced on the nodes.
func waitNoOrphans(t *testing.T, f *blobFront, prefix string, limit time.Duration) {
	t.Helper()
	began := time.Now()
	var left []string
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		var rep api.GCReport
		f.post(t, "/v1/gc", &rep)
		if left = orphans(t, prefix); len(left) == 0 {
			t.Logf("no orphan left %s after the last write (last GC pass: %+v)", time.Since(began).Round(time.Second), rep)
			return
		}
	}
	t.Fatalf("%d orphans after %s: %v (log %s)", len(left), limit, left[:min(len(left), 10)], f.log)
}

// ownPrefix checks that nothing is stored under prefix yet and removes
// whatever is when the test ends.
func ownPrefix(t *testing.T, prefix string) {
	t.Helper()
	consul := consulAPI(t, cluster.ConsulAddr())
	if pairs, _, err := consul.KV().List(prefix, nil); err != nil || len(pairs) > 0 {
		t.Fatalf("%s is not empty (%d keys, %v)", prefix, len(pairs), err)
	}
	t.Cleanup(func() {
		if _, err := consul.KV().DeleteTree(prefix, nil); err != nil {
			t.Errorf("delete %s: %v", prefix, err)
		}
	})
}

// startPrefixedBlob runs a harvest-blob of its own over the cluster's
// MinIO servers, keeping its state under prefix (apart from the other blob
// tests'; see ownPrefix), with extra configuration.
func startPrefixedBlob(t *testing.T, prefix string, extra string) *blobFront {
	return startPrefixedBlobVia(t, prefix, extra, nil)
}

// startPrefixedBlobVia is startPrefixedBlob with some stores reached at
// other addresses (by store number: a proxy in front of that MinIO).
func startPrefixedBlobVia(t *testing.T, prefix string, extra string, endpoints map[int]string) *blobFront {
	t.Helper()
	f := &blobFront{addr: fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(2)), admin: fmt.Sprintf("http://127.0.0.1:%d", cluster.SparePort(3)),
		config: filepath.Join(cluster.RunDir, "blob-"+strings.Trim(prefix, "/")+".hcl"), endpoints: endpoints}
	writePrefixedBlobConfig(t, f, prefix, extra)
	f.log, f.stop = startDaemonStoppable(t, blobBinary(), "agent", "-config", f.config)
	t.Cleanup(func() { noDataRace(t, f.log) })
	waitServing(t, f)
	return f
}

// writePrefixedBlobConfig writes f.config: a front listening at f.addr and
// f.admin over the cluster's MinIO servers (only store-N for N in only, when
// given), its state under prefix.
func writePrefixedBlobConfig(t *testing.T, f *blobFront, prefix string, extra string, only ...int) {
	t.Helper()
	var nodes strings.Builder
	for i := range cluster.MinIO {
		if len(only) > 0 && !slices.Contains(only, i+1) {
			continue
		}
		n := clusterNodeBlock(i, 8192)
		if e, ok := f.endpoints[i+1]; ok {
			n.endpoint = e
		}
		n.write(&nodes)
	}
	repair := "repair {\n  health_interval = \"1s\"\n}" // unless extra has a repair block of its own
	if strings.Contains(extra, "repair {") {
		repair = ""
	}
	if err := os.WriteFile(f.config, []byte(blobFrontHead(f.addr, strings.TrimPrefix(f.admin, "http://"))+fmt.Sprintf(`
consul {
  address = %q
  prefix  = %q
}
%s
%s
%s`, cluster.ConsulAddr(), prefix, repair, extra, nodes.String())), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitServing waits until the front at f.addr takes connections and gives
// it its S3 client, unless it has one (a front started again keeps it:
// clients may be using it).
func waitServing(t *testing.T, f *blobFront) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", f.addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("harvest-blob does not serve after 30 s (log %s)", f.log)
		}
	}
	if f.s3 != nil {
		return
	}
	c, err := minio.New(f.addr, &minio.Options{Creds: credentials.NewStaticV4("blob-access", "blob-secret-key-123", ""), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.s3 = c
}

// blobFrontHead is how every acceptance front's config begins: its S3 and
// admin listeners, the S3 keys the tests sign with and the admin token.
func blobFrontHead(listen, admin string) string {
	return fmt.Sprintf(`
log_level    = "DEBUG"
listen       = %q
admin_listen = %q
access_key   = "blob-access"
secret_key   = "blob-secret-key-123"
admin_tokens = [%q]
`, listen, admin, blobAdminToken)
}

// nodeBlock is one node block of a front's config.
type nodeBlock struct {
	name, endpoint, accessKey, secretKey string
	tenant, environment, rack            string
	capacityMB                           int
}

// clusterNodeBlock is the cluster's MinIO server i (0-based) as a front's
// node store-<i+1>: its address and keys, its client's tenant and
// environment, rack-<i+1>.
func clusterNodeBlock(i, capacityMB int) nodeBlock {
	m, meta := cluster.MinIO[i], cluster.NomadClients[i].Meta
	return nodeBlock{name: fmt.Sprintf("store-%d", i+1), endpoint: m.HTTPAddr, accessKey: m.AccessKey, secretKey: m.SecretKey,
		tenant: meta["harvest_tenant"], environment: meta["harvest_environment"], rack: fmt.Sprintf("rack-%d", i+1), capacityMB: capacityMB}
}

func (n nodeBlock) write(b *strings.Builder) {
	fmt.Fprintf(b, "node %q {\n  endpoint = %q\n  access_key = %q\n  secret_key = %q\n  tenant = %q\n  environment = %q\n  rack = %q\n  capacity_mb = %d\n}\n",
		n.name, n.endpoint, n.accessKey, n.secretKey, n.tenant, n.environment, n.rack, n.capacityMB)
}
