package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/nodes"
	"github.com/harvest-platform/harvest/storage/upkeep"
)

func testBackend(t *testing.T, repair upkeep.RepairOptions) *Backend {
	t.Helper()
	var cfgs []nodes.Config
	for i, env := range []string{"a", "b", "c", "d"} {
		cfgs = append(cfgs, nodes.Config{Node: nodes.Node{ID: "n" + env, Tenant: env + "/fn", Environment: env,
			Endpoint: "127.0.0.1:1", Capacity: int64(i+1) << 30}, AccessKey: "k", SecretKey: "s"})
	}
	ns, err := nodes.Connect(cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{KV: kv.NewMem(), Prefix: "harvest/", Nodes: ns, Log: hclog.NewNullLogger(), Repair: repair})
}

// TestStatusListsEveryNodeWithTheUpkeeps: the status lists every node,
// up or not, beside the upkeep's part, whose time left (nothing repaired
// yet) is at the repair limit of the servers up (storage/upkeep's
// TestStatusETAFollowsTheMeasuredRepairRate checks it at a measured rate).
func TestStatusListsEveryNodeWithTheUpkeeps(t *testing.T) {
	ctx := context.Background()
	b := testBackend(t, upkeep.RepairOptions{PerServerPerHour: 30})
	b.nodes.SetUp("na", true)
	b.nodes.SetUp("nb", true)
	// 12 objects with their one replica on a node down (not repairable
	// now), one with none (lost)
	record, _ := json.Marshal(bucketInfo{Name: "data"})
	if ok, err := b.kv.CAS(ctx, b.bucketKey("data"), record, 0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for i := 0; i <= 12; i++ {
		e := catalog.Entry{Bucket: "data", Key: fmt.Sprintf("k%d", i), Size: 1, ETag: `"e"`}
		if i < 12 {
			e.Replicas = []catalog.Replica{{Node: "nc", Name: "x"}}
		}
		if _, err := b.cat.Replace(ctx, e, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.upkeep.RepairScan(ctx); err != nil {
		t.Fatal(err)
	}
	st := b.Status()
	// the limit of two live servers, 60 per hour, 12 left
	if st.UnderReplicated != 12 || st.Lost != 1 || st.LimitPerHour != 30 || st.ETASeconds != 12.0/60*3600 || !st.Maintainer {
		t.Fatalf("the upkeep's part: %+v", st)
	}
	up := 0
	for _, n := range st.Nodes {
		if n.Up {
			up++
		}
	}
	if len(st.Nodes) != 4 || up != 2 {
		t.Fatalf("nodes %+v", st.Nodes)
	}
}

func TestBigChunksCopiesEverything(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 300_000)
	var out bytes.Buffer
	n, err := bigChunks{ReadCloser: io.NopCloser(bytes.NewReader(data)), conn: &request{}}.WriteTo(&out)
	if err != nil || n != int64(len(data)) || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("copied %d of %d (%v)", n, len(data), err)
	}
}

// fakeNode answers S3 GETs with its own name, as a storage node would the
// replica's bytes.
func fakeNode(t *testing.T, name string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("location") {
			fmt.Fprint(w, `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">us-east-1</LocationConstraint>`)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(name)))
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("ETag", `"0"`)
		fmt.Fprint(w, name)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestReadsSkipBusyNodesAndPreferTheLeastLoaded: a read goes to a replica
// whose node is up and not busy, the one with fewest reads in flight first
// (their times to first byte alike), and fails with SlowDown when
// every replica's node is busy.
func TestReadsSkipBusyNodesAndPreferTheLeastLoaded(t *testing.T) {
	var cfgs []nodes.Config
	for _, env := range []string{"a", "b", "c"} {
		cfgs = append(cfgs, nodes.Config{Node: nodes.Node{ID: "n" + env, Tenant: env + "/fn", Environment: env,
			Endpoint: fakeNode(t, "n"+env), Capacity: 1 << 30}, AccessKey: "k", SecretKey: "s"})
	}
	ns, err := nodes.Connect(cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{KV: kv.NewMem(), Prefix: "harvest/", Nodes: ns, Log: hclog.NewNullLogger()})
	for _, id := range []string{"na", "nb", "nc"} {
		ns.SetUp(id, true)
	}
	e := catalog.Entry{Bucket: "b", Key: "k", Size: 2, Replicas: []catalog.Replica{{Node: "na", Name: "x"}, {Node: "nb", Name: "x"}, {Node: "nc", Name: "x"}}}
	read := func() string {
		t.Helper()
		body, err := b.openObject(b.request(context.Background()), e, 0, e.Size)
		if err != nil {
			t.Fatal(err)
		}
		defer body.Close()
		data, _ := io.ReadAll(body)
		return string(data)
	}
	if got := read(); got != "na" {
		t.Fatalf("with nothing busy or loaded the first replica serves; got %s", got)
	}
	ns.SetBusy("na", true)
	for i := 0; i < 3; i++ {
		defer ns.StartRead("nb")()
	}
	if got := read(); got != "nc" {
		t.Fatalf("na busy, nb serving 3 reads: read from %s, want nc", got)
	}
	if ns.InFlight("nc") != 0 {
		t.Fatalf("a closed read is still counted on nc: %d", ns.InFlight("nc"))
	}
	ns.SetBusy("nb", true)
	ns.SetBusy("nc", true)
	if _, err := b.openObject(b.request(context.Background()), e, 0, e.Size); err == nil || !strings.Contains(err.Error(), "SlowDown") {
		t.Fatalf("every replica busy: %v, want SlowDown", err)
	}
}
