//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/api"
	blobkv "github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// hup asks the front to read its configuration again.
func (p *frontProcess) hup() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		p.t.Fatal(err)
	}
}

// waitStatus waits up to limit for the front's status to satisfy ok.
func waitStatus(t *testing.T, f *blobFront, what string, limit time.Duration, ok func(api.BlobStatus) bool) api.BlobStatus {
	t.Helper()
	var st api.BlobStatus
	var err error
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if st, err = tryStatus(f); err == nil && ok(st) {
			return st
		}
	}
	t.Fatalf("%s: not within %s: %+v (%v; log %s)", what, limit, st, err, f.log)
	return st
}

func nodeState(st api.BlobStatus, id string) (api.BlobNode, bool) {
	for _, n := range st.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return api.BlobNode{}, false
}

// TestBlobFrontFollowsItsNodeListWithoutARestart: harvest-blob reads its
// configuration again on SIGHUP (Nomad's template sends one when the
// harvest-storage service changes). A node the new list adds is checked,
// marked and written to; a node it drops is kept down although it still
// answers, and once lost its replicas are re-created on the others. The
// process is the same throughout, and every object reads back.
func TestBlobFrontFollowsItsNodeListWithoutARestart(t *testing.T) {
	const prefix = "harvest-reload/"
	ownPrefix(t, prefix)
	extra := `
repair {
  per_server_per_hour = 360000
  interval            = "2s"
  health_interval     = "1s"
  lost_after          = "5s"
}`
	f := &blobFront{addr: fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(2)), admin: fmt.Sprintf("http://127.0.0.1:%d", cluster.SparePort(3)),
		config: filepath.Join(cluster.RunDir, "blob-reload.hcl")}
	writePrefixedBlobConfig(t, f, prefix, extra, 1, 2, 3, 4, 5)
	p := startFrontProcess(t, f, "reload")
	pid := p.cmd.Process.Pid
	ctx := context.Background()
	if err := f.s3.MakeBucket(ctx, "reload", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	d := dataset{}
	for i := 0; i < 20; i++ {
		d.put(t, f.s3, "reload", fmt.Sprintf("before/%02d", i), 64<<10)
	}
	waitStatus(t, f, "five nodes up", 30*time.Second, func(st api.BlobStatus) bool { return len(st.Nodes) == 5 })

	writePrefixedBlobConfig(t, f, prefix, extra) // all six
	p.hup()
	waitStatus(t, f, "store-6 added and up", 30*time.Second, func(st api.BlobStatus) bool {
		n, ok := nodeState(st, "store-6")
		return len(st.Nodes) == 6 && ok && n.Up
	})
	for i := 0; i < 40; i++ {
		d.put(t, f.s3, "reload", fmt.Sprintf("after/%02d", i), 64<<10)
	}
	store := catalog.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), prefix)
	held := func(node string) int {
		entries, _, err := store.List(ctx, "reload", "", "", -1)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if e.HasReplicaOn(node) {
				n++
			}
		}
		return n
	}
	if n := held("store-6"); n == 0 {
		t.Fatal("no object written after the reload has a replica on the added store-6")
	} else {
		t.Logf("store-6, added by a reload, holds replicas of %d objects", n)
	}

	dropped := held("store-3")
	writePrefixedBlobConfig(t, f, prefix, extra, 1, 2, 4, 5, 6)
	p.hup()
	st := waitStatus(t, f, "store-3 removed, its replicas re-created elsewhere", 60*time.Second, func(st api.BlobStatus) bool {
		n, ok := nodeState(st, "store-3")
		return ok && n.Removed && !n.Up && st.UnderReplicated == 0 && st.Lost == 0 && held("store-3") == 0
	})
	t.Logf("store-3, dropped by a reload, held replicas of %d objects; %d replicas re-created, none under-replicated", dropped, st.Repaired)
	d.check(t, f.s3, "reload", "after the node list changed twice")
	if p.cmd.Process.Pid != pid {
		t.Fatal("the front was restarted")
	}
	log, _ := os.ReadFile(f.log)
	if n := strings.Count(string(log), "reloaded the node list"); n != 2 {
		t.Fatalf("%d reloads logged, want 2 (log %s)", n, f.log)
	}
	if bytes.Contains(log, []byte("take effect when harvest-blob restarts")) {
		t.Fatal("a reload of the node list alone was taken for a change of other settings")
	}
}
