//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/minio/minio-go/v7"

	blobkv "github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// rssMiB is a process's resident memory.
func rssMiB(t *testing.T, pid int) float64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestMeasureCatalogueLimits fills one bucket's catalogue in the real Consul
// with 10,000 and then 100,000 entries (HARVEST_CATALOGUE_SIZES overrides:
// "10000,100000,1000000") and reports, side by side in one run, the time of
// one 1,000-key page as the front reads it now (the bucket's keys without
// values, then the page's entries) and as it read it before (every entry of
// the bucket), a page through the front with an S3 client, and Consul's
// resident memory. Medians of 5. Runs when HARVEST_MEASURE=1. The former
// read is skipped above 200,000 entries: at 1,000,000 Consul's memory passed
// 13 GB while it answered it.
func TestMeasureCatalogueLimits(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("set HARVEST_MEASURE=1 to measure the catalogue's limits")
	}
	sizes := []int{10_000, 100_000}
	if s := os.Getenv("HARVEST_CATALOGUE_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	const prefix = "harvest-catalogue/"
	ownPrefix(t, prefix)
	ctx := context.Background()
	f := startPrefixedBlob(t, prefix, "")
	if err := f.s3.MakeBucket(ctx, "big", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	client := consulAPI(t, cluster.ConsulAddr())
	store := catalog.NewStore(blobkv.NewConsul(client), prefix)
	consulPID := cluster.ConsulServer.PID
	t.Logf("Consul RSS with an empty catalogue: %.0f MiB", rssMiB(t, consulPID))
	median := func(fn func()) time.Duration {
		var ds []time.Duration
		for i := 0; i < 5; i++ {
			start := time.Now()
			fn()
			ds = append(ds, time.Since(start))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[2].Round(time.Millisecond)
	}
	written := 0
	for _, n := range sizes {
		start, from := time.Now(), written
		for written < n {
			var ops consulapi.KVTxnOps
			for len(ops) < blobkv.MaxOps && written < n {
				key := fmt.Sprintf("set-%03d/object-%08d.parquet", written%500, written)
				e := catalog.Entry{Version: strconv.Itoa(written), Bucket: "big", Key: key, Size: 64 << 20, ETag: `"0123456789abcdef0123456789abcdef"`,
					LastModified: time.Now().UTC(), Replicas: []catalog.Replica{{Node: "store-1", Name: "o/x/" + key}, {Node: "store-2", Name: "o/x/" + key},
						{Node: "store-3", Name: "o/x/" + key}}}
				data, _ := json.Marshal(e)
				ops = append(ops, &consulapi.KVTxnOp{Verb: consulapi.KVSet, Key: store.Key("big", key), Value: data})
				written++
			}
			if ok, resp, _, err := client.KV().Txn(ops, nil); err != nil || !ok {
				t.Fatalf("writing entries: %v %+v", err, resp)
			}
		}
		t.Logf("%d entries in the bucket (%s to write the last %d)", n, time.Since(start).Round(time.Second), n-from)
		marker := fmt.Sprintf("set-%03d/", 250) // a page from the middle of the bucket
		now := median(func() {
			keys, err := store.Keys(ctx, "big", "", marker)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.Entries(ctx, "big", keys[:1000]); err != nil {
				t.Fatal(err)
			}
		})
		before := time.Duration(0)
		if n <= 200_000 { // beyond, one answer of every entry takes Consul past 10 GB (seen at 1,000,000)
			before = median(func() {
				if _, _, err := store.List(ctx, "big", "", marker, 1000); err != nil {
					t.Fatal(err)
				}
			})
		}
		s3page := median(func() {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel() // stops minio-go from asking for the next page
			n := 0
			for o := range f.s3.ListObjects(ctx, "big", minio.ListObjectsOptions{Recursive: true, StartAfter: marker, MaxKeys: 1000}) {
				if o.Err != nil {
					t.Fatal(o.Err)
				}
				if n++; n == 1000 {
					break
				}
			}
		})
		t.Logf("%d objects: a 1,000-key page: keys then the page's entries %s, every entry of the bucket (before) %s (%.1fx); "+
			"through the front with minio-go %s; Consul RSS %.0f MiB", n, now, before, float64(before)/float64(now), s3page, rssMiB(t, consulPID))
	}
}

// TestMeasureFrontsAggregateGet reads 64 MiB objects with 4 concurrent
// clients for 8 s through one front, then through two (clients split
// between them), alternately for 3 rounds each, and reports the aggregate
// MiB/s of each. Runs when HARVEST_MEASURE=1.
func TestMeasureFrontsAggregateGet(t *testing.T) {
	if os.Getenv("HARVEST_MEASURE") != "1" {
		t.Skip("set HARVEST_MEASURE=1 to measure aggregate reads through one and two fronts")
	}
	const prefix = "harvest-aggregate/"
	ownPrefix(t, prefix)
	ctx := context.Background()
	var fronts []*frontProcess
	for i, ports := range [][2]int{{cluster.SparePort(2), cluster.SparePort(3)}, {cluster.SparePort(0), cluster.SparePort(1)}} {
		name := string(rune('a' + i))
		f := &blobFront{addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), admin: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
			config: filepath.Join(cluster.RunDir, "blob-aggregate-"+name+".hcl")}
		writePrefixedBlobConfig(t, f, prefix, "")
		fronts = append(fronts, startFrontProcess(t, f, "aggregate-"+name))
	}
	if err := fronts[0].s3.MakeBucket(ctx, "agg", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for i := 0; i < 4; i++ {
		if _, err := fronts[0].s3.PutObject(ctx, "agg", fmt.Sprintf("o%d", i), bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{DisableMultipart: true}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(n int) float64 {
		var total atomic.Int64
		stop := time.Now().Add(8 * time.Second)
		var wg sync.WaitGroup
		for c := 0; c < 4; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					obj, err := fronts[c%n].s3.GetObject(ctx, "agg", fmt.Sprintf("o%d", c), minio.GetObjectOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					m, err := io.Copy(io.Discard, obj)
					obj.Close()
					if err != nil || m != int64(len(data)) {
						t.Errorf("read %d bytes: %v", m, err)
						return
					}
					total.Add(m)
				}
			}()
		}
		wg.Wait()
		return float64(total.Load()) / (1 << 20) / 8
	}
	var one, two []float64
	for round := 0; round < 3; round++ {
		one = append(one, run(1))
		two = append(two, run(2))
	}
	t.Logf("4 clients reading 64 MiB objects, aggregate MiB/s per 8-s round: one front %.0f, two fronts %.0f", one, two)
}

// TestMeasureWarpGet runs MinIO's warp benchmark (the binary at
// HARVEST_WARP; it is not part of the build) for 64 MiB GETs with 4
// concurrent operations against one MinIO server directly, against the
// front and through a bare TCP relay to that MinIO (startRelay: what one
// more hop costs before any S3 work), alternately, twice each, and logs
// warp's summaries. Runs when
// HARVEST_MEASURE=1 and HARVEST_WARP are set.
func TestMeasureWarpGet(t *testing.T) {
	warp := os.Getenv("HARVEST_WARP")
	if os.Getenv("HARVEST_MEASURE") != "1" || warp == "" {
		t.Skip("set HARVEST_MEASURE=1 and HARVEST_WARP=<path to warp> to run warp")
	}
	f := startBlob(t)
	m := cluster.MinIO[0]
	targets := []struct{ name, host, access, secret string }{
		{"direct (one MinIO)", m.HTTPAddr, m.AccessKey, m.SecretKey},
		{"through the front (R=3)", f.addr, "blob-access", "blob-secret-key-123"},
		{"through a bare TCP relay to the same MinIO", startRelay(t, m.HTTPAddr), m.AccessKey, m.SecretKey},
	}
	for round := 0; round < 2; round++ {
		for _, tg := range targets {
			cmd := exec.Command(warp, "get", "--no-color", "--host", tg.host, "--access-key", tg.access, "--secret-key", tg.secret,
				"--bucket", "warp-get", "--obj.size", "64MiB", "--objects", "8", "--concurrent", "4", "--duration", "20s",
				"--lookup", "path")
			cmd.Dir = t.TempDir() // warp leaves its raw results in its working folder
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("warp against %s: %v\n%s", tg.name, err, out)
			}
			var summary []string
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "Average:") || strings.Contains(line, "Report:") || strings.Contains(line, "Throughput") {
					summary = append(summary, strings.TrimSpace(line))
				}
			}
			t.Logf("warp get, %s, round %d: %s", tg.name, round+1, strings.Join(summary, " | "))
		}
	}
}
