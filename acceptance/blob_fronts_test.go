//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/harvest-platform/harvest/api"
	blobkv "github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
	"github.com/harvest-platform/harvest/storage/front"
)

// frontProcess is a harvest-blob the test may kill (SIGKILL) and start
// again; at cleanup it is stopped with SIGTERM, which must end it cleanly.
type frontProcess struct {
	*blobFront
	t    *testing.T
	name string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan error
}

func startFrontProcess(t *testing.T, f *blobFront, name string) *frontProcess {
	p := &frontProcess{blobFront: f, t: t, name: name}
	f.log = filepath.Join(cluster.RunDir, "logs", "harvest-blob-"+name+".log")
	p.start()
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.cmd == nil {
			return
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("front %s did not shut down cleanly on SIGTERM: %v (log %s)", name, err, f.log)
			}
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Errorf("front %s ignored SIGTERM for 15s (log %s)", name, f.log)
		}
		noDataRace(t, f.log)
	})
	return p
}

func (p *frontProcess) start() {
	p.t.Helper()
	path := blobBinary()
	if !filepath.IsAbs(path) {
		path = filepath.Join(bin, path)
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command(path, "agent", "-config", p.config)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	waitServing(p.t, p.blobFront)
}

// kill ends the front at once, as a crash or a lost machine would.
func (p *frontProcess) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.cmd.Process.Kill()
	<-p.done
	p.cmd = nil
}

// tryStatus reads a front's /v1/status, or says why it cannot.
func tryStatus(f *blobFront) (api.BlobStatus, error) {
	var st api.BlobStatus
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(f.admin + "/v1/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// loadStats counts what the clients did.
type loadStats struct {
	ops, retried, failed atomic.Int64
	byKind               sync.Map // kind -> *atomic.Int64
	firstFailure         atomic.Value
}

func (s *loadStats) count(kind string) {
	v, _ := s.byKind.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// loadClient is one S3 client of the load: it owns its keys, so it knows
// what each must read back, and it sends each request to one front and,
// when that fails, again to the other (as a client behind a load balancer
// or Consul DNS would), until it succeeds or its patience runs out.
type loadClient struct {
	id     int
	fronts []*frontProcess
	rng    *rand.Rand
	acked  map[string][]byte // what each key must read back (absent: deleted or never written)
	stats  *loadStats
}

const loadBucket = "fronts"

// do runs one request until one front answers it without error; an error
// the request itself shows (a wrong read) fails at once.
func (c *loadClient) do(kind string, op func(ctx context.Context, s3 *minio.Client) (retry bool, err error)) {
	c.stats.ops.Add(1)
	c.stats.count(kind)
	var last error
	for attempt := 0; attempt < 40; attempt++ {
		f := c.fronts[(c.id+attempt)%len(c.fronts)]
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		retry, err := op(ctx, f.s3)
		cancel()
		if err == nil {
			if attempt > 0 {
				c.stats.retried.Add(1)
			}
			return
		}
		last = fmt.Errorf("%s via front %s (attempt %d): %w", kind, f.name, attempt+1, err)
		if !retry {
			break
		}
		time.Sleep(time.Duration(100+attempt*100) * time.Millisecond)
	}
	c.stats.failed.Add(1)
	c.stats.firstFailure.CompareAndSwap(nil, last.Error())
}

func (c *loadClient) key() string { return fmt.Sprintf("c%02d/k%d", c.id, c.rng.IntN(6)) }

func (c *loadClient) step() {
	switch r := c.rng.IntN(100); {
	case r < 40:
		key := c.key()
		size := 1 + c.rng.IntN(256<<10)
		if c.id < 2 && c.rng.IntN(4) == 0 { // two clients also write large objects, read back as large
			size = 16<<20 + c.rng.IntN(48<<20)
		}
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(c.rng.Uint32())
		}
		c.do("put", func(ctx context.Context, s3 *minio.Client) (bool, error) {
			_, err := s3.PutObject(ctx, loadBucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
			return true, err
		})
		c.acked[key] = data
	case r < 75:
		key := c.key()
		want, exists := c.acked[key]
		c.do("get", func(ctx context.Context, s3 *minio.Client) (bool, error) {
			obj, err := s3.GetObject(ctx, loadBucket, key, minio.GetObjectOptions{})
			if err != nil {
				return true, err
			}
			defer obj.Close()
			got, err := io.ReadAll(obj)
			if !exists {
				if minio.ToErrorResponse(err).Code == "NoSuchKey" {
					return false, nil
				}
				return err != nil, fmt.Errorf("%s was deleted or never written, yet reads %d bytes (%v)", key, len(got), err)
			}
			if err != nil {
				return true, err
			}
			if !bytes.Equal(got, want) {
				return false, fmt.Errorf("%s reads %d bytes that are not the %d acknowledged", key, len(got), len(want))
			}
			return false, nil
		})
	case r < 85:
		prefix := fmt.Sprintf("c%02d/", c.id)
		var want []string
		for k := range c.acked {
			want = append(want, k)
		}
		slices.Sort(want)
		c.do("list", func(ctx context.Context, s3 *minio.Client) (bool, error) {
			var got []string
			for o := range s3.ListObjects(ctx, loadBucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
				if o.Err != nil {
					return true, o.Err
				}
				got = append(got, o.Key)
			}
			if !slices.Equal(got, want) {
				return false, fmt.Errorf("list %s: %v, want %v", prefix, got, want)
			}
			return false, nil
		})
	default:
		key := c.key()
		c.do("delete", func(ctx context.Context, s3 *minio.Client) (bool, error) {
			return true, s3.RemoveObject(ctx, loadBucket, key, minio.RemoveObjectOptions{})
		})
		delete(c.acked, key)
	}
}

// TestBlobManyFrontsUnderLoadLoseNothing: 64 S3 clients send mixed PUT, GET,
// LIST and DELETE to two fronts over the same catalogue for 60 s (two of
// them also write objects of 16-64 MiB), while the
// front holding the maintainer lock is killed (SIGKILL; started again once
// the other front has taken over maintenance) and a storage node is wiped.
// Every request succeeds, at worst on a retry to the other front; every
// read returns exactly what was last acknowledged; the maintainer takes the
// wiped node for a reimage and restores full replication; afterwards every
// replica the catalogue names is on its node, every acknowledged object
// reads back byte-identical through both fronts, and nothing deleted comes
// back.
func TestBlobManyFrontsUnderLoadLoseNothing(t *testing.T) {
	const prefix = "harvest-fronts/"
	ownPrefix(t, prefix)
	extra := `
maintainer {
  session_ttl = "10s"
  lock_delay  = "2s"
}
repair {
  per_server_per_hour = 360000
  interval            = "2s"
  health_interval     = "1s"
  lost_after          = "30s"
}`
	var fronts []*frontProcess
	for i, ports := range [][2]int{{cluster.SparePort(2), cluster.SparePort(3)}, {cluster.SparePort(0), cluster.SparePort(1)}} {
		name := string(rune('a' + i))
		f := &blobFront{addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), admin: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
			config: filepath.Join(cluster.RunDir, "blob-fronts-"+name+".hcl")}
		writePrefixedBlobConfig(t, f, prefix, extra)
		fronts = append(fronts, startFrontProcess(t, f, name))
	}
	maintainers := func() []*frontProcess {
		var out []*frontProcess
		for _, f := range fronts {
			if st, err := tryStatus(f.blobFront); err == nil && st.Maintainer {
				out = append(out, f)
			}
		}
		return out
	}
	var maint []*frontProcess
	for deadline := time.Now().Add(30 * time.Second); len(maint) != 1 && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		maint = maintainers()
	}
	if len(maint) != 1 {
		t.Fatalf("%d fronts maintain the tier, want 1", len(maint))
	}
	if err := fronts[0].s3.MakeBucket(context.Background(), loadBucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}

	stats := &loadStats{}
	start := time.Now()
	var end atomic.Int64 // the load runs 60 s, and at least 10 s after the wipe
	end.Store(start.Add(60 * time.Second).UnixNano())
	var wg sync.WaitGroup
	clients := make([]*loadClient, 64)
	for i := range clients {
		clients[i] = &loadClient{id: i, fronts: fronts, rng: rand.New(rand.NewPCG(uint64(i), 17)), acked: map[string][]byte{}, stats: stats}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().UnixNano() < end.Load() && stats.failed.Load() == 0 {
				clients[i].step()
			}
		}()
	}

	// the faults, while the load runs
	at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }
	since := func() time.Duration { return time.Since(start).Round(100 * time.Millisecond) }
	at(10 * time.Second)
	killed := maint[0]
	t.Logf("%s: killing front %s, the maintainer, after %d requests", since(), killed.name, stats.ops.Load())
	killed.kill()
	killedAt := time.Now()
	for maint = maintainers(); len(maint) != 1 && time.Since(killedAt) < 90*time.Second; maint = maintainers() {
		time.Sleep(200 * time.Millisecond)
	}
	if len(maint) != 1 || maint[0] == killed {
		t.Fatalf("no front took over maintenance within 90 s of the maintainer's death")
	}
	t.Logf("%s: front %s took over maintenance %s after front %s died (session TTL 10 s, lock delay 2 s)",
		since(), maint[0].name, time.Since(killedAt).Round(100*time.Millisecond), killed.name)
	at(20 * time.Second)
	killed.start()
	t.Logf("%s: front %s started again", since(), killed.name)
	at(30 * time.Second)
	markerBefore := registeredMarker(t, prefix, "store-2")
	reimage(t, "store-2")
	t.Logf("%s: wiped store-2 after %d requests", since(), stats.ops.Load())
	end.Store(max(end.Load(), time.Now().Add(10*time.Second).UnixNano()))
	wg.Wait()
	kinds := map[string]int64{}
	stats.byKind.Range(func(k, v any) bool { kinds[k.(string)] = v.(*atomic.Int64).Load(); return true })
	t.Logf("64 clients, %s: %d requests (%v), %d succeeded only on a retry, %d failed",
		time.Since(start).Round(time.Second), stats.ops.Load(), kinds, stats.retried.Load(), stats.failed.Load())
	if stats.failed.Load() > 0 {
		t.Fatalf("a client saw an error: %v (logs %s, %s)", stats.firstFailure.Load(), fronts[0].log, fronts[1].log)
	}

	// one maintainer again, and it repairs what the wipe took
	var st api.BlobStatus
	var err error
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		maint = maintainers()
		if len(maint) != 1 {
			continue
		}
		st, err = tryStatus(maint[0].blobFront)
		up := 0
		for _, n := range st.Nodes {
			if n.Up {
				up++
			}
		}
		if err == nil && up == len(cluster.MinIO) && st.UnderReplicated == 0 && st.Lost == 0 && st.Objects > 0 {
			break
		}
	}
	if len(maint) != 1 || st.UnderReplicated != 0 || st.Lost != 0 {
		t.Fatalf("after the load: %d maintainers; status %+v (%v)", len(maint), st, err)
	}
	for _, f := range fronts {
		logLines(t, f.log, "maintain", "stands by", "standing by", "reimaged", "maintainer lock")
	}
	// each front sees the other through their shared ledgers (the killed one's old
	// ledger goes stale within a minute of its death)
	for _, f := range fronts {
		seen := 0.0
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			if seen = f.metric(t, "harvest_blob_fronts"); seen == 2 {
				break
			}
		}
		if seen != 2 {
			t.Fatalf("front %s counts %v fronts serving through the ledgers, want 2", f.name, seen)
		}
	}
	if after := registeredMarker(t, prefix, "store-2"); after == markerBefore || after == "" {
		t.Fatalf("store-2's identity marker %q -> %q: the wipe was not taken for a reimage", markerBefore, after)
	}
	t.Logf("front %s maintains: %d objects, none under-replicated or lost, %d replicas re-created", maint[0].name, st.Objects, st.Repaired)
	// every replica the catalogue names is on its node, store-2 included
	entries, _, err := catalog.NewStore(blobkv.NewConsul(consulAPI(t, cluster.ConsulAddr())), prefix).List(context.Background(), loadBucket, "", "", -1)
	if err != nil {
		t.Fatal(err)
	}
	onStore2 := 0
	for _, e := range entries {
		if len(e.Replicas) != 3 {
			t.Fatalf("%s names %d replicas", e.Key, len(e.Replicas))
		}
		for _, r := range e.Replicas {
			if _, err := nodeCore(t, r.Node).StatObject(context.Background(), front.DataBucket, r.Name, minio.StatObjectOptions{}); err != nil {
				t.Fatalf("%s: its replica %s on %s: %v", e.Key, r.Name, r.Node, err)
			}
			if r.Node == "store-2" {
				onStore2++
			}
		}
	}
	t.Logf("all %d replicas of the %d objects are on their nodes, %d of them on the wiped store-2", 3*len(entries), len(entries), onStore2)
	for _, f := range fronts {
		for _, c := range clients {
			for k := 0; k < 6; k++ {
				key := fmt.Sprintf("c%02d/k%d", c.id, k)
				obj, err := f.s3.GetObject(context.Background(), loadBucket, key, minio.GetObjectOptions{})
				var got []byte
				if err == nil {
					got, err = io.ReadAll(obj)
					obj.Close()
				}
				want, exists := c.acked[key]
				switch {
				case !exists && minio.ToErrorResponse(err).Code != "NoSuchKey":
					t.Fatalf("front %s: %s was deleted or never written, yet reads %d bytes (%v)", f.name, key, len(got), err)
				case exists && (err != nil || !bytes.Equal(got, want)):
					t.Fatalf("front %s: %s reads %d bytes (%v), not the %d acknowledged", f.name, key, len(got), err, len(want))
				}
			}
		}
	}
}

// registeredMarker is a storage node's identity marker in the registry of
// the deployment at prefix.
func registeredMarker(t *testing.T, prefix, node string) string {
	t.Helper()
	p, _, err := consulAPI(t, cluster.ConsulAddr()).KV().Get(prefix+"blob/nodes/"+node, nil)
	if err != nil || p == nil {
		t.Fatalf("registry entry of %s: %v", node, err)
	}
	var n struct{ Marker string }
	if err := json.Unmarshal(p.Value, &n); err != nil {
		t.Fatal(err)
	}
	return n.Marker
}

// logLines logs the lines of a log file that hold any of the words.
func logLines(t *testing.T, path string, words ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("reading %s: %v", path, err)
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		for _, w := range words {
			if strings.Contains(line, w) {
				t.Logf("%s: %s", filepath.Base(path), line)
				break
			}
		}
	}
}
