//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/harvest-platform/harvest/internal/standin"
)

// TestMeasureBlobUnderLoad installs the platform by docs/install.md (the
// storage job's memory_mb and the front's replicas as the guide sets them),
// then loads it as one user reading and writing large objects would: 4
// concurrent 64 MiB GETs and 4 concurrent 64 MiB PUTs through the front for
// HARVEST_MEASURE_LOAD (60 s), counting failed requests and storage-node
// restarts and reporting the storage tasks' peak memory. Then, in
// HARVEST_MEASURE_ROUNDS (3) interleaved rounds, GET-only and PUT-only phases
// of HARVEST_MEASURE_PHASE (15 s) straight to one storage node and through
// the front: throughput and the CPU seconds per GiB of the front and of the
// storage nodes (from /proc), min-max over the rounds. Minutes, on the bare
// cluster, so only with HARVEST_MEASURE=1:
//
//	HARVEST_ACCEPTANCE_BARE=1 HARVEST_MEASURE=1 go test -tags acceptance -count=1 -v -timeout 60m -run TestMeasureBlobUnderLoad ./acceptance/
func TestMeasureBlobUnderLoad(t *testing.T) {
	if !bareRun() || os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("installs the platform on a bare cluster and loads it for minutes: HARVEST_ACCEPTANCE_BARE=1 HARVEST_MEASURE=1")
	}
	_, _, env, _ := installPlatform(t)
	// The guide's storage nodes declare 2 GiB each, less than a minute of
	// this load writes (and the front keeps overwritten replicas for its GC
	// grace, an hour): the same job with 20 GiB each, the guide's memory_mb
	// and replicas kept. MinIO restarts with the new job version.
	root, _ := repoRoot()
	cmd := exec.Command(filepath.Join(stack, "nomad"), "job", "run", "-var", "minio_path="+filepath.Join(stack, "minio"),
		"-var", "data_root="+filepath.Join(cluster.RunDir, "install-storage"), "-var", "capacity_mb=20480", "-var", "memory_mb=512",
		filepath.Join(root, "jobs", "harvest-storage.nomad.hcl"))
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nomad job run harvest-storage: %v\n%s", err, out)
	}
	waitStorageCapacity(t, 20480)
	ctx := context.Background()
	vars, _, err := nomadClient(t).Variables().Read("nomad/jobs/harvest-blob", nil)
	if err != nil {
		t.Fatal(err)
	}
	front, err := minio.New("127.0.0.1:"+strconv.Itoa(cluster.SparePort(2)), &minio.Options{
		Creds: credentials.NewStaticV4(vars.Items["access_key"], vars.Items["secret_key"], "")})
	if err != nil {
		t.Fatal(err)
	}
	nodes := storageNodes(t, vars.Items)
	direct := nodes[0].client
	relays := map[string]*minio.Client{}
	relayPIDs := map[string]int{}
	for _, mode := range []string{"copy", "splice"} {
		addr, pid := startRelayProcess(t, nodes[0].addr, mode)
		c, err := minio.New(addr, &minio.Options{Creds: nodes[0].creds})
		if err != nil {
			t.Fatal(err)
		}
		relays[mode], relayPIDs[mode] = c, pid
	}
	for _, c := range []*minio.Client{front, direct} {
		if err := c.MakeBucket(ctx, "load", minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	data := make([]byte, 64<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	for i := range 4 { // objects to read
		for _, c := range []*minio.Client{front, direct} {
			if _, err := c.PutObject(ctx, "load", "read-"+strconv.Itoa(i), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	restarts0 := storageRestarts(t)

	// the load an operator's user brings: reads and writes of large objects at once
	load := envDuration("HARVEST_MEASURE_LOAD", time.Minute)
	stopSampling := sampleStorageRSS(t)
	mixed := runLoad(front, data, 4, 4, load)
	peakRSS := stopSampling()
	cleanWrites(t, front)
	restarts := storageRestarts(t) - restarts0
	t.Logf("mixed load through the front for %s: %d GETs and %d PUTs of 64 MiB, %d failed (%v); storage-node restarts %d; storage tasks' peak RSS %s (their cgroups' peak with the page cache: %s)",
		load, mixed.gets, mixed.puts, mixed.failed, mixed.firstErr, restarts, peakRSS, storagePeakMemory(t))

	// the cost per byte, direct and through the front, phase by phase
	rounds, phase := envInt("HARVEST_MEASURE_ROUNDS", 3), envDuration("HARVEST_MEASURE_PHASE", 15*time.Second)
	type cost struct{ mibps, front, storage []float64 }
	costs := map[string]*cost{}
	phases := []struct {
		name       string
		c          *minio.Client
		gets, puts int
		hop        []int // the process between the client and the node (the front's when nil)
	}{{"GET direct", direct, 4, 0, nil}, {"GET front", front, 4, 0, nil},
		{"GET copy relay", relays["copy"], 4, 0, []int{relayPIDs["copy"]}},
		{"GET splice relay", relays["splice"], 4, 0, []int{relayPIDs["splice"]}},
		{"PUT direct", direct, 0, 4, nil}, {"PUT front", front, 0, 4, nil}}
	for r := range rounds {
		for _, p := range phases {
			// the processes now: a node that restarted has a new one
			hop, minioPIDs := p.hop, processesOf("minio")
			if hop == nil {
				hop = processesOf("harvest-blob")
			}
			f0, s0 := cpuSeconds(t, hop...), cpuSeconds(t, minioPIDs...)
			res := runLoad(p.c, data, p.gets, p.puts, phase)
			f1, s1 := cpuSeconds(t, hop...), cpuSeconds(t, minioPIDs...)
			if p.puts > 0 {
				cleanWrites(t, p.c)
			}
			gib := float64(res.bytes) / (1 << 30)
			c := costs[p.name]
			if c == nil {
				c = &cost{}
				costs[p.name] = c
			}
			c.mibps = append(c.mibps, float64(res.bytes)/(1<<20)/res.took.Seconds())
			c.front = append(c.front, (f1-f0)/gib)
			c.storage = append(c.storage, (s1-s0)/gib)
			t.Logf("round %d %-16s %.0f MiB/s, front (or relay) %.2f CPU-s/GiB, storage nodes %.2f CPU-s/GiB, %d failed",
				r+1, p.name, c.mibps[r], c.front[r], c.storage[r], res.failed)
			mixed.failed += res.failed
		}
	}
	mm := func(xs []float64) string {
		return fmt.Sprintf("%.2f (%.2f-%.2f)", standin.Median(xs), minOf(xs), maxOfF(xs))
	}
	for _, p := range phases {
		name := p.name
		c := costs[name]
		t.Logf("%-16s median (min-max) of %d rounds: %s MiB/s, front (or relay) %s CPU-s/GiB, storage nodes %s CPU-s/GiB", name, rounds,
			mm(c.mibps), mm(c.front), mm(c.storage))
	}
	t.Logf("GET through the front / direct: %.2f; storage CPU per GiB behind the front / direct: %.2f",
		standin.Median(costs["GET front"].mibps)/standin.Median(costs["GET direct"].mibps),
		standin.Median(costs["GET front"].storage)/standin.Median(costs["GET direct"].storage))
	if mixed.failed > 0 || restarts > 0 {
		t.Errorf("%d requests failed and %d storage nodes restarted under load, want none", mixed.failed, restarts)
	}
}

// loadResult is what one load phase did.
type loadResult struct {
	gets, puts, failed int
	bytes              int64
	took               time.Duration
	firstErr           error
}

// runLoad runs gets workers reading the objects read-0..3 and puts workers
// writing fresh keys, each request 64 MiB, for d.
func runLoad(c *minio.Client, data []byte, gets, puts int, d time.Duration) loadResult {
	var res loadResult
	var mu sync.Mutex
	var bytesDone atomic.Int64
	record := func(get bool, n int64, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.failed++
			if res.firstErr == nil {
				res.firstErr = err
			}
			return
		}
		bytesDone.Add(n)
		if get {
			res.gets++
		} else {
			res.puts++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range gets + puts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				if w < gets {
					obj, err := c.GetObject(context.Background(), "load", "read-"+strconv.Itoa((w+i)%4), minio.GetObjectOptions{})
					var n int64
					if err == nil {
						n, err = io.Copy(io.Discard, obj)
						obj.Close()
						if err == nil && n != int64(len(data)) {
							err = fmt.Errorf("read %d of %d bytes", n, len(data))
						}
					}
					record(true, n, err)
					continue
				}
				key := fmt.Sprintf("write-%d-%d", w, i%2)
				_, err := c.PutObject(context.Background(), "load", key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
				record(false, int64(len(data)), err)
			}
		}()
	}
	wg.Wait()
	res.took, res.bytes = time.Since(start), bytesDone.Load()
	return res
}

// waitStorageCapacity waits until every storage node is healthy in Consul
// and declares mb of capacity.
func waitStorageCapacity(t *testing.T, mb int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		entries, _, err := consulAPI(t, cluster.ConsulAddr()).Health().Service("harvest-storage", "", true, nil)
		if err != nil {
			continue
		}
		n := 0
		for _, e := range entries {
			if e.Service.Meta["capacity_mb"] == strconv.Itoa(mb) {
				n++
			}
		}
		if n == len(cluster.NomadClients) {
			time.Sleep(10 * time.Second) // the front reads the nodes again
			return
		}
	}
	t.Fatalf("the storage nodes did not come back with %d MiB each", mb)
}

// cleanWrites deletes what runLoad wrote and aborts uploads it left, so
// that the next phase finds the nodes' declared capacity free again.
func cleanWrites(t *testing.T, c *minio.Client) {
	t.Helper()
	ctx := context.Background()
	for obj := range c.ListObjects(ctx, "load", minio.ListObjectsOptions{Prefix: "write-"}) {
		if obj.Err == nil {
			_ = c.RemoveObject(ctx, "load", obj.Key, minio.RemoveObjectOptions{})
		}
	}
	for up := range c.ListIncompleteUploads(ctx, "load", "write-", true) {
		if up.Err == nil {
			_ = c.RemoveIncompleteUpload(ctx, "load", up.Key)
		}
	}
}

// storageNode is one storage node of the installed platform.
type storageNode struct {
	name, addr string
	creds      *credentials.Credentials
	client     *minio.Client
}

// storageNodes finds the storage nodes in Consul, their keys in the front's
// variable, and their MinIO processes.
func storageNodes(t *testing.T, items map[string]string) []storageNode {
	t.Helper()
	entries, _, err := consulAPI(t, cluster.ConsulAddr()).Health().Service("harvest-storage", "", true, nil)
	if err != nil || len(entries) == 0 {
		t.Fatalf("no healthy storage node: %v", err)
	}
	var out []storageNode
	for _, e := range entries {
		name := e.Service.Meta["node"]
		k := strings.NewReplacer("-", "_", ".", "_").Replace(name)
		addr := fmt.Sprintf("%s:%d", e.Service.Address, e.Service.Port)
		creds := credentials.NewStaticV4(items[k+"_access_key"], items[k+"_secret_key"], "")
		c, err := minio.New(addr, &minio.Options{Creds: creds})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, storageNode{name: name, addr: addr, creds: creds, client: c})
	}
	return out
}

// processesOf are the pids of the processes running the executable named
// exe (its base name).
func processesOf(exe string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		path, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if filepath.Base(strings.TrimSuffix(path, " (deleted)")) == exe {
			out = append(out, pid)
		}
	}
	return out
}

// storageRestarts sums the restarts of the storage job's tasks.
func storageRestarts(t *testing.T) int {
	t.Helper()
	n := 0
	for _, a := range storageAllocs(t) {
		for _, st := range a.TaskStates {
			n += int(st.Restarts)
		}
	}
	return n
}

func storageAllocs(t *testing.T) []*nomadapi.Allocation {
	t.Helper()
	c := nomadClient(t)
	stubs, _, err := c.Jobs().Allocations("harvest-storage", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*nomadapi.Allocation
	for _, s := range stubs {
		if s.ClientStatus != nomadapi.AllocClientStatusRunning {
			continue
		}
		a, _, err := c.Allocations().Info(s.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// storagePeakMemory is each running storage task's peak memory (cgroup v1
// memory.max_usage_in_bytes of its Nomad cgroup).
func storagePeakMemory(t *testing.T) string {
	var parts []string
	for _, a := range storageAllocs(t) {
		v := readTrim(filepath.Join("/sys/fs/cgroup/memory/nomad", a.ID+".minio", "memory.max_usage_in_bytes"))
		b, _ := strconv.ParseFloat(v, 64)
		parts = append(parts, fmt.Sprintf("%s %.0f MiB", a.NodeName, b/(1<<20)))
	}
	return strings.Join(parts, ", ")
}

// sampleStorageRSS samples every running storage task's RSS (cgroup v1
// memory.stat total_rss: the processes' anonymous memory, not the page
// cache) every 100 ms until the returned stop, which reports the peaks.
func sampleStorageRSS(t *testing.T) (stop func() string) {
	t.Helper()
	allocs := storageAllocs(t)
	peaks := make([]float64, len(allocs))
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			for i, a := range allocs {
				stat, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory/nomad", a.ID+".minio", "memory.stat"))
				for _, line := range strings.Split(string(stat), "\n") {
					if v, ok := strings.CutPrefix(line, "total_rss "); ok {
						b, _ := strconv.ParseFloat(v, 64)
						peaks[i] = max(peaks[i], b)
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() string {
		close(done)
		<-finished
		var parts []string
		for i, a := range allocs {
			parts = append(parts, fmt.Sprintf("%s %.0f MiB", a.NodeName, peaks[i]/(1<<20)))
		}
		return strings.Join(parts, ", ")
	}
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOfF(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
