package front

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/storage/catalog"
)

// countingKV counts the reads of the catalogue's object entries.
type countingKV struct {
	kv.KV
	objects      string
	gets, values atomic.Int64 // entries read one by one; entries read by listing
}

func (c *countingKV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	if strings.HasPrefix(key, c.objects) {
		c.gets.Add(1)
	}
	return c.KV.Get(ctx, key)
}

func (c *countingKV) List(ctx context.Context, prefix string) ([]kv.Pair, error) {
	pairs, err := c.KV.List(ctx, prefix)
	for _, p := range pairs {
		if strings.HasPrefix(p.Key, c.objects) {
			c.values.Add(1)
		}
	}
	return pairs, err
}

// countingFront is a front over nodes in memory whose catalogue reads are
// counted, with a bucket "data".
func countingFront(t *testing.T) (*Backend, *countingKV) {
	t.Helper()
	counting := &countingKV{KV: kv.NewMem(), objects: "harvest/blob/objects/"}
	_, cfgs := memNodes(t)
	b, _ := frontOver(t, counting, cfgs)
	makeBucket(t, b, "data", nil)
	return b, counting
}

// TestAListPageReadsOnlyItsEntries: a page of 10 of a 300-object bucket
// reads 10 entries (and the bucket's keys, without values); paging through
// with continuation tokens and a delimiter gives every key and common
// prefix once, in order.
func TestAListPageReadsOnlyItsEntries(t *testing.T) {
	ctx := context.Background()
	b, counting := countingFront(t)
	var want []string
	for i := 0; i < 300; i++ {
		key := fmt.Sprintf("d%d/%03d", i%3, i)
		want = append(want, key)
		if _, err := b.cat.Replace(ctx, catalog.Entry{Bucket: "data", Key: key, Size: 1, ETag: `"e"`}, 0); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: ptr("data"), MaxKeys: ptr(int32(10))})
	if err != nil || len(out.Contents) != 10 || !*out.IsTruncated {
		t.Fatalf("first page: %d objects, truncated %v, %v", len(out.Contents), out.IsTruncated, err)
	}
	if gets, values := counting.gets.Load(), counting.values.Load(); gets != 10 || values != 0 {
		t.Fatalf("a page of 10 read %d entries one by one and %d by listing, want 10 and 0", gets, values)
	}
	var got []string
	token := (*string)(nil)
	for {
		out, err := b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: ptr("data"), MaxKeys: ptr(int32(7)), ContinuationToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			got = append(got, *o.Key)
		}
		if !*out.IsTruncated {
			break
		}
		token = out.NextContinuationToken
	}
	if len(got) != len(want) || strings.Join(got, ",") != strings.Join(slices.Sorted(slices.Values(want)), ",") {
		t.Fatalf("paging gave %d keys, want %d in order", len(got), len(want))
	}
	out, err = b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: ptr("data"), Delimiter: ptr("/"), MaxKeys: ptr(int32(2))})
	if err != nil || len(out.CommonPrefixes) != 2 || *out.CommonPrefixes[0].Prefix != "d0/" || !*out.IsTruncated {
		t.Fatalf("delimited page: %+v %v", out.CommonPrefixes, err)
	}
	out, err = b.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: ptr("data"), Delimiter: ptr("/"), ContinuationToken: out.NextContinuationToken})
	if err != nil || len(out.CommonPrefixes) != 1 || *out.CommonPrefixes[0].Prefix != "d2/" || *out.IsTruncated {
		t.Fatalf("second delimited page: %+v %v", out.CommonPrefixes, err)
	}
}

// TestRepairRetriesReadOnlyWhatItLeftShort: objects the rate limit left
// short after a scan are repaired by the next retry, which reads their
// entries one by one and lists nothing.
func TestRepairRetriesReadOnlyWhatItLeftShort(t *testing.T) {
	ctx := context.Background()
	b, counting := countingFront(t)
	b.upkeep.SetRepairLimit(1) // one repair per receiving node, then none for an hour
	for i := 0; i < 8; i++ {
		key := fmt.Sprintf("k%d", i)
		if err := putBytes(t, b, "data", key, []byte(strings.Repeat(key, 100))); err != nil {
			t.Fatal(err)
		}
		if _, err := b.cat.Update(ctx, "data", key, func(e *catalog.Entry) error { e.Replicas = e.Replicas[1:]; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.upkeep.RepairScan(ctx); err != nil {
		t.Fatal(err)
	}
	left := 0
	for i := 0; i < 8; i++ {
		if e, _ := b.cat.Get(ctx, "data", fmt.Sprintf("k%d", i)); len(e.Replicas) < 3 {
			left++
		}
	}
	if left < 4 || b.Status().UnderReplicated != left {
		t.Fatalf("after the scan %d objects left short, %d counted; want at least 4 (4 nodes, one repair each)", left, b.Status().UnderReplicated)
	}
	b.upkeep.SetRepairLimit(math.Inf(1)) // no limit now
	listed, gets := counting.values.Load(), counting.gets.Load()
	if err := b.upkeep.RetryRepairs(ctx); err != nil {
		t.Fatal(err)
	}
	if n := counting.values.Load() - listed; n != 0 {
		t.Fatalf("the retry read %d entries by listing the catalogue", n)
	}
	if n := counting.gets.Load() - gets; n < int64(left) {
		t.Fatalf("the retry read %d entries, fewer than the %d it retried", n, left)
	}
	for i := 0; i < 8; i++ {
		if e, _ := b.cat.Get(ctx, "data", fmt.Sprintf("k%d", i)); len(e.Replicas) != 3 {
			t.Fatalf("k%d has %d replicas after the retry", i, len(e.Replicas))
		}
	}
	if b.Status().UnderReplicated != 0 {
		t.Fatalf("after the retry: %d under-replicated", b.Status().UnderReplicated)
	}
}
