package front

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/go-hclog"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/internal/syncbuf"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/kv/kvtest"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/objects"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

// declTenants are the test nodes' tenants: node n<env> of tenant <env>/fn,
// 1 GiB configured each.
var declTenants = []string{"a", "b", "c", "d"}

// declBackend is a front over four nodes in memory (all up) and mem, with
// the front's configuration at replicas 3, strict false, and its log in
// logs.
func declBackend(t testing.TB, mem kv.KV) (*Backend, map[string]*memNode, *syncbuf.Buffer) {
	t.Helper()
	stores, cfgs := memNodes(t)
	b, logs := frontOver(t, mem, cfgs)
	return b, stores, logs
}

// memNodes starts the nodes of declTenants in memory.
func memNodes(t testing.TB) (map[string]*memNode, []nodes.Config) {
	t.Helper()
	stores := map[string]*memNode{}
	var cfgs []nodes.Config
	for _, env := range declTenants {
		m := &memNode{objects: map[string][]byte{}}
		srv := httptest.NewServer(m)
		t.Cleanup(srv.Close)
		stores["n"+env] = m
		cfgs = append(cfgs, nodes.Config{Node: nodes.Node{ID: "n" + env, Tenant: env + "/fn", Environment: env,
			Endpoint: strings.TrimPrefix(srv.URL, "http://"), Capacity: 1 << 30}, AccessKey: "k", SecretKey: "s"})
	}
	return stores, cfgs
}

// frontOver is a front over the given nodes (all up) and mem.
func frontOver(t testing.TB, mem kv.KV, cfgs []nodes.Config) (*Backend, *syncbuf.Buffer) {
	t.Helper()
	ns, err := nodes.Connect(cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	b := New(Options{KV: mem, Prefix: "harvest/", Nodes: ns, Replicas: 3, Log: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}),
		Seed: 7, Repair: upkeep.RepairOptions{PerServerPerHour: 3600}})
	for _, env := range declTenants {
		ns.SetUp("n"+env, true)
	}
	b.objects.Regrid()
	return b, logs
}

func putDoc(t *testing.T, mem history.KV, name string, v any) {
	t.Helper()
	if err := history.NewStore(mem, "harvest/").PutDocument(context.Background(), name, v); err != nil {
		t.Fatal(err)
	}
}

func deleteDoc(t *testing.T, mem history.KV, name string) {
	t.Helper()
	if err := history.NewStore(mem, "harvest/").DeleteDocument(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

func tenantDecl(env string, storageMB int64) declare.Tenant {
	return declare.Tenant{Environment: env, Function: "fn", TenantValues: declare.TenantValues{StorageMB: &storageMB}}
}

func tenantDoc(env string) string {
	return declare.TenantDocument(history.TenantID{Environment: env, Function: "fn"})
}

func makeBucket(t testing.TB, b *Backend, name string, tags map[string]string) *bucketInfo {
	t.Helper()
	ctx := context.Background()
	if err := b.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if tags != nil {
		if err := b.PutBucketTagging(ctx, name, tags); err != nil {
			t.Fatal(err)
		}
	}
	info, err := b.bucket(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// capacities are the nodes' effective capacities in MiB and their sources,
// as /v1/status shows them.
func capacities(b *Backend) map[string]string {
	out := map[string]string{}
	for _, n := range b.Status().Nodes {
		out[n.ID] = fmt.Sprintf("%d %s", n.Capacity>>20, n.CapacityFrom)
	}
	return out
}

// TestDefaultReplicationIsBucketTagOverPolicyOverConfig: buckets without
// policy tags take the policy document's replicas and diversity, else the
// front's; tags win over both; /v1/status reports the default and its
// source; deleting the document gives the front's values back.
func TestDefaultReplicationIsBucketTagOverPolicyOverConfig(t *testing.T) {
	mem := kv.NewMem()
	b, _, logs := declBackend(t, mem)
	ctx := context.Background()
	untagged := makeBucket(t, b, "plain", nil)
	four := makeBucket(t, b, "four", map[string]string{tagReplicas: "4", tagDiversity: "degraded"})
	strictOnly := makeBucket(t, b, "strict-only", map[string]string{tagDiversity: "strict"})
	check := func(what string, info *bucketInfo, want policy) {
		t.Helper()
		if got := b.policyOf(info); got != want {
			t.Fatalf("%s: bucket %s has %+v, want %+v", what, info.Name, got, want)
		}
	}
	status := func(what string, replicas int, from, div, divFrom string) {
		t.Helper()
		st := b.Status()
		if st.Replicas != replicas || st.ReplicasFrom != from || st.Diversity != div || st.DiversityFrom != divFrom {
			t.Fatalf("%s: status replicas %d from %q, diversity %q from %q; want %d from %q, %q from %q",
				what, st.Replicas, st.ReplicasFrom, st.Diversity, st.DiversityFrom, replicas, from, div, divFrom)
		}
	}

	b.RefreshDeclarations(ctx)
	check("config", untagged, policy{replicas: 3})
	check("config", four, policy{replicas: 4})
	check("config", strictOnly, policy{replicas: 3, strict: true})
	status("config", 3, "config", "degraded", "config")

	two, strict := 2, "strict"
	putDoc(t, mem, declare.PolicyName, declare.Policy{Replicas: &two, Diversity: &strict})
	b.RefreshDeclarations(ctx)
	check("policy", untagged, policy{replicas: 2, strict: true})
	check("policy", four, policy{replicas: 4, strict: false}) // both tags win
	check("policy", strictOnly, policy{replicas: 2, strict: true})
	status("policy", 2, "policy", "strict", "policy")
	if n := logs.Count("default replication changed"); n != 1 {
		t.Fatalf("the change logged %d times:\n%s", n, logs)
	}
	b.RefreshDeclarations(ctx)
	if n := logs.Count("default replication changed"); n != 1 {
		t.Fatalf("an unchanged document logged as a change:\n%s", logs)
	}

	// a document setting replicas only leaves the diversity to the config
	five := 5
	putDoc(t, mem, declare.PolicyName, declare.Policy{Replicas: &five})
	b.RefreshDeclarations(ctx)
	check("policy replicas only", untagged, policy{replicas: 5})
	status("policy replicas only", 5, "policy", "degraded", "config")

	deleteDoc(t, mem, declare.PolicyName)
	b.RefreshDeclarations(ctx)
	check("policy deleted", untagged, policy{replicas: 3})
	status("policy deleted", 3, "config", "degraded", "config")
}

// TestDeclaredStorageIsTheNodesCapacity: a tenant's declared storage_mb
// becomes its nodes' capacity (status and placement) on the next refresh,
// other tenants keep the configured one; a shrink below what a node holds
// deletes nothing and leaves the node full; deleting the declaration gives
// the configured capacity back.
func TestDeclaredStorageIsTheNodesCapacity(t *testing.T) {
	mem := kv.NewMem()
	b, _, logs := declBackend(t, mem)
	ctx := context.Background()
	b.RefreshDeclarations(ctx)
	want := map[string]string{"na": "1024 config", "nb": "1024 config", "nc": "1024 config", "nd": "1024 config"}
	if got := capacities(b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("nothing declared: %v", got)
	}

	putDoc(t, mem, tenantDoc("a"), tenantDecl("a", 3000))
	putDoc(t, mem, tenantDoc("b"), tenantDecl("b", 10))
	putDoc(t, mem, declare.TenantDocument(history.TenantID{Environment: "z", Function: "fn"}), tenantDecl("z", 1)) // no node of ours
	b.RefreshDeclarations(ctx)
	want["na"], want["nb"] = "3000 tenant", "10 tenant"
	if got := capacities(b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("declared: %v, want %v", got, want)
	}
	if n, _ := b.objects.Grid().Node("na"); n.Free != 3000<<20 {
		t.Fatalf("na's free space in the grid %d, want the declared 3000 MiB", n.Free)
	}
	// an object of 20 MiB fits three nodes only: nb (10 MiB) is left out
	for i := 0; i < 20; i++ {
		p, err := b.objects.Place(catalog.Entry{}, 20<<20, objects.Policy{Replicas: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(p.Nodes, ","), "nb") {
			t.Fatalf("a 20 MiB replica placed on nb, declared 10 MiB: %v", p.Nodes)
		}
		b.nodes.Unreserve(p.Nodes, 20<<20)
	}

	// a shrink below what a node holds: full, nothing deleted
	b.nodes.SetCommitted(map[string]int64{"na": 500 << 20}, time.Now())
	putDoc(t, mem, tenantDoc("a"), tenantDecl("a", 100))
	b.RefreshDeclarations(ctx)
	if n, _ := b.objects.Grid().Node("na"); n.Free != 0 {
		t.Fatalf("na holding 500 MiB of 100: %d bytes free in the grid, want 0", n.Free)
	}
	if st := b.Status(); st.Nodes[0].ID != "na" || st.Nodes[0].Used != 500<<20 || st.Nodes[0].Capacity != 100<<20 {
		t.Fatalf("status after the shrink %+v", st.Nodes[0])
	}
	if logs.Count("storage node holds more than its capacity") != 1 {
		t.Fatalf("the shrink below the bytes held was not logged:\n%s", logs)
	}
	if _, err := b.objects.Place(catalog.Entry{}, 1, objects.Policy{Replicas: 4}, nil); err == nil {
		t.Fatal("four replicas placed with na full")
	}

	deleteDoc(t, mem, tenantDoc("a"))
	b.RefreshDeclarations(ctx)
	if got := capacities(b)["na"]; got != "1024 config" {
		t.Fatalf("declaration deleted: na %s, want the configured 1024 MiB", got)
	}
	if n, _ := b.objects.Grid().Node("na"); n.Free != 524<<20 {
		t.Fatalf("na back to 1024 MiB holding 500: %d MiB free", n.Free>>20)
	}
}

// TestCorruptDeclarationsKeepTheLastGoodValues: a corrupt policy document
// keeps the last good defaults, a corrupt declaration the last good
// capacity of its tenant's nodes (while another tenant's new declaration
// applies), Consul away keeps everything; each different failure is logged
// once and counted, the recovery logged once.
func TestCorruptDeclarationsKeepTheLastGoodValues(t *testing.T) {
	raw := kv.NewMem()
	mem := kvtest.NewFaulty(raw)
	b, _, logs := declBackend(t, mem)
	ctx := context.Background()
	two := 2
	putDoc(t, mem, declare.PolicyName, declare.Policy{Replicas: &two})
	putDoc(t, mem, tenantDoc("a"), tenantDecl("a", 3000))
	b.RefreshDeclarations(ctx)
	good := func(what string, na, nb string) {
		t.Helper()
		if st := b.Status(); st.Replicas != 2 || st.ReplicasFrom != "policy" {
			t.Fatalf("%s: default replicas %d from %s, want the last good 2 from policy", what, st.Replicas, st.ReplicasFrom)
		}
		if got := capacities(b); got["na"] != na || got["nb"] != nb {
			t.Fatalf("%s: capacities %v, want na %s, nb %s", what, got, na, nb)
		}
	}
	good("good documents", "3000 tenant", "1024 config")
	failures := func() float64 {
		t.Helper()
		mfs, err := b.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "harvest_blob_declaration_read_failures_total" {
				if v := mf.GetMetric()[0].GetCounter().GetValue(); v != float64(b.decl.fails.Failures) {
					t.Fatalf("metric %v, failures noted %d", v, b.decl.fails.Failures)
				}
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("no harvest_blob_declaration_read_failures_total metric")
		return 0
	}

	raw.Put("harvest/"+declare.PolicyName, []byte(`{"replicas":`))
	b.RefreshDeclarations(ctx)
	b.RefreshDeclarations(ctx)
	good("corrupt policy", "3000 tenant", "1024 config")
	raw.Put("harvest/"+declare.PolicyName, []byte(`{"replicas":12}`))
	b.RefreshDeclarations(ctx)
	good("policy out of range", "3000 tenant", "1024 config")
	raw.Put("harvest/"+tenantDoc("a"), []byte(`{"environment":"a","function":"fn","storage_mb":-5}`))
	putDoc(t, mem, tenantDoc("b"), tenantDecl("b", 2000))
	b.RefreshDeclarations(ctx)
	good("corrupt tenant, another declared", "3000 tenant", "2000 tenant")
	raw.Put("harvest/"+tenantDoc("a"), []byte(`{"environment":"q","function":"fn","storage_mb":5}`))
	b.RefreshDeclarations(ctx)
	good("another tenant's declaration under a's key", "3000 tenant", "2000 tenant")
	mem.FailReads(true)
	b.RefreshDeclarations(ctx)
	b.RefreshDeclarations(ctx)
	good("Consul away", "3000 tenant", "2000 tenant")
	if n := logs.Count("cannot read the declarations; keeping the last good values"); n != 5 || failures() != 7 {
		t.Fatalf("%d failure lines for 5 different failures, %v failed reads counted (want 7):\n%s", n, failures(), logs)
	}
	for _, s := range []string{"unexpected end of JSON input", "replicas 12: want 1 to 9", "storage_mb -5", `holds tenant \"q/fn\"`, "connection reset"} {
		if logs.Count(s) == 0 {
			t.Fatalf("no failure line says %q:\n%s", s, logs)
		}
	}

	mem.FailReads(false)
	deleteDoc(t, mem, declare.PolicyName)
	putDoc(t, mem, tenantDoc("a"), tenantDecl("a", 100))
	b.RefreshDeclarations(ctx)
	if logs.Count("declarations readable again: failed_reads=7") != 1 {
		t.Fatalf("recovery not logged once:\n%s", logs)
	}
	if st := b.Status(); st.Replicas != 3 || st.ReplicasFrom != "config" || capacities(b)["na"] != "100 tenant" {
		t.Fatalf("after recovery: replicas %d from %s, capacities %v", st.Replicas, st.ReplicasFrom, capacities(b))
	}
}

// TestUntaggedBucketWritesThePolicysReplicaCount: with the policy
// document at replicas 2 an object written into an untagged bucket lands
// on two nodes (a tagged bucket keeps its count); raising the document to
// 3 leaves it short, and the repairer's next scan brings it to three.
func TestUntaggedBucketWritesThePolicysReplicaCount(t *testing.T) {
	mem := kv.NewMem()
	b, stores, _ := declBackend(t, mem)
	ctx := context.Background()
	two := 2
	putDoc(t, mem, declare.PolicyName, declare.Policy{Replicas: &two})
	b.RefreshDeclarations(ctx)
	makeBucket(t, b, "plain", nil)
	makeBucket(t, b, "one", map[string]string{tagReplicas: "1"})
	put := func(bucket string) catalog.Entry {
		t.Helper()
		data := []byte("an object of " + bucket)
		if _, err := b.PutObject(ctx, s3response.PutObjectInput{Bucket: &bucket, Key: ptr("k"), ContentLength: ptr(int64(len(data))),
			Body: bytes.NewReader(data)}); err != nil {
			t.Fatal(err)
		}
		e, err := b.cat.Get(ctx, bucket, "k")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	onNodes := func(e catalog.Entry) int {
		n := 0
		for _, r := range e.Replicas {
			if stores[r.Node].has(r.Name) {
				n++
			}
		}
		return n
	}
	e := put("plain")
	if len(e.Replicas) != 2 || onNodes(e) != 2 {
		t.Fatalf("untagged bucket under replicas=2: %d replicas in the catalogue, %d on the nodes", len(e.Replicas), onNodes(e))
	}
	if one := put("one"); len(one.Replicas) != 1 || onNodes(one) != 1 {
		t.Fatalf("harvest-replicas=1 bucket: %+v", one.Replicas)
	}

	three := 3
	putDoc(t, mem, declare.PolicyName, declare.Policy{Replicas: &three})
	b.RefreshDeclarations(ctx)
	if !b.upkeep.ScanPending() {
		t.Fatal("a higher default did not kick the repairer")
	}
	if err := b.upkeep.RepairScan(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := b.cat.Get(ctx, "plain", "k")
	if err != nil || len(e.Replicas) != 3 || onNodes(e) != 3 {
		t.Fatalf("after the repair scan under replicas=3: %+v on %d nodes (%v)", e.Replicas, onNodes(e), err)
	}
	if one, _ := b.cat.Get(ctx, "one", "k"); len(one.Replicas) != 1 {
		t.Fatalf("the harvest-replicas=1 bucket's object was repaired to %d", len(one.Replicas))
	}
}
