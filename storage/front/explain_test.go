package front

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/versity/versitygw/s3err"
	"github.com/versity/versitygw/s3response"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/nodes"
)

// TestExplainSaysWhereAnObjectIsAndWhatAReadFindsThere: the explanation
// names the catalogue's replicas with their tenants, grid cells and
// history; with one holder busy and one down, one replica is readable now;
// the expected hours a day every replica is busy at once is the product of
// their tenants' busy hours, summed over the day. A missing key or bucket
// is the S3 error a read gets.
func TestExplainSaysWhereAnObjectIsAndWhatAReadFindsThere(t *testing.T) {
	ctx := context.Background()
	_, cfgs := memNodes(t)
	b, _ := frontOver(t, kv.NewMem(), cfgs)
	stats := map[string]nodes.TenantStats{}
	for i, env := range declTenants {
		hours := make([]float64, 24)
		for h := range hours {
			hours[h] = 0.1 * float64(i+1) // tenant a busy 10% of every hour, b 20%, ...
		}
		stats[env+"/fn"] = nodes.TenantStats{ReimageRate: float64(i), PeakCPU: 20 * float64(i+1), BusyHours: hours}
	}
	b.nodes.SetStats(stats)
	b.objects.Regrid()
	makeBucket(t, b, "data", nil)
	body := bytes.Repeat([]byte("x"), 1000)
	if _, err := b.PutObject(ctx, s3response.PutObjectInput{Bucket: ptr("data"), Key: ptr("a/b c"),
		ContentLength: ptr(int64(len(body))), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	e, err := b.cat.Get(ctx, "data", "a/b c")
	if err != nil {
		t.Fatal(err)
	}
	busy, down := e.Replicas[0].Node, e.Replicas[1].Node
	b.nodes.SetBusy(busy, true)
	b.nodes.SetUp(down, false)

	o, err := b.Explain(ctx, "data", "a/b c")
	if err != nil {
		t.Fatal(err)
	}
	if o.Bucket != "data" || o.Key != "a/b c" || o.Size != 1000 || o.Version != e.Version || len(o.Replicas) != 3 || o.ReadableNow != 1 {
		t.Fatalf("explanation %+v, want the 1,000-byte object's 3 replicas, one readable", o)
	}
	want := 24.0
	for i, r := range o.Replicas {
		st := stats[r.Tenant]
		if r.Node != e.Replicas[i].Node || !r.Configured || r.Row < 0 || r.Col < 0 || r.PeakCPU != st.PeakCPU || len(r.BusyHours) != 24 {
			t.Fatalf("replica %d: %+v, want node %s in the grid with its tenant's history", i, r, e.Replicas[i].Node)
		}
		if r.Busy != (r.Node == busy) || r.Up == (r.Node == down) {
			t.Fatalf("replica %d on %s: busy %v, up %v (busy node %s, down node %s)", i, r.Node, r.Busy, r.Up, busy, down)
		}
		want *= st.BusyHours[0]
	}
	if math.Abs(o.AllBusyHoursPerDay-want) > 1e-9 {
		t.Fatalf("all busy %.6f hours a day, want %.6f", o.AllBusyHoursPerDay, want)
	}

	rest := slices.DeleteFunc(slices.Clone(cfgs), func(c nodes.Config) bool { return c.ID == busy })
	if _, err := b.SetNodes(rest, stats); err != nil { // dropped from the configuration (reload.go)
		t.Fatal(err)
	}
	if o, err := b.Explain(ctx, "data", "a/b c"); err != nil || o.Replicas[0].Configured || !o.Replicas[1].Configured {
		t.Fatalf("a removed node: %+v %v, want replica 0 not configured", o.Replicas, err)
	}

	var apiErr s3err.APIError
	if _, err := b.Explain(ctx, "data", "nothing"); !errors.As(err, &apiErr) || apiErr.Code != "NoSuchKey" {
		t.Fatalf("a missing key: %v, want NoSuchKey", err)
	}
	var bucketErr s3err.BucketError
	if _, err := b.Explain(ctx, "nobucket", "k"); !errors.As(err, &bucketErr) || bucketErr.Code != "NoSuchBucket" {
		t.Fatalf("a missing bucket: %v, want NoSuchBucket", err)
	}
}
