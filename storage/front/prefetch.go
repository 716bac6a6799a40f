package front

import (
	"context"
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/harvest-platform/harvest/storage/catalog"
)

// A GET or HEAD of an object needs two Consul reads before the node's own
// read: the bucket (the gateway asks for its ACL before every request) and
// the object's entry. The front starts the entry's read when the gateway
// asks for the bucket, so that the two run at once; GetObject and
// HeadObject then take the entry read for their request. The read starts
// after the request arrived, so it sees every write acknowledged before the
// request was sent, as a read started later would; a request the gateway
// refuses leaves its read unused.

// entryValue is where a request keeps its entry read.
const entryValue = "harvest-entry"

// entryRead is one entry's read, started ahead.
type entryRead struct {
	bucket, key string
	done        chan struct{}
	entry       catalog.Entry
	err         error
}

// readEntryAhead starts reading the entry a GET or HEAD of an object in
// bucket will ask for, keeping the read on the request. The key is the
// request's path after the bucket, as the gateway names it; outside a
// server, or for other requests, it does nothing.
func (b *Backend) readEntryAhead(parent context.Context, bucket string) {
	rc, ok := parent.(*fasthttp.RequestCtx)
	if !ok || !rc.IsGet() && !rc.IsHead() {
		return
	}
	key, ok := strings.CutPrefix(string(rc.Path()), "/"+bucket+"/")
	if !ok || key == "" {
		return
	}
	if r, _ := rc.UserValue(entryValue).(*entryRead); r != nil && r.bucket == bucket && r.key == key {
		return // the gateway asked twice (a public bucket's check, then the ACL's)
	}
	r := &entryRead{bucket: bucket, key: key, done: make(chan struct{})}
	rc.SetUserValue(entryValue, r)
	go func() {
		defer close(r.done)
		ctx, cancel := context.WithTimeout(context.Background(), b.timeouts.Consul)
		defer cancel()
		r.entry, r.err = b.cat.Get(ctx, bucket, key)
	}()
}

// readAhead is the entry read started for this request's bucket and key,
// if one was.
func readAhead(parent context.Context, bucket, key string) *entryRead {
	rc, ok := parent.(*fasthttp.RequestCtx)
	if !ok {
		return nil
	}
	r, _ := rc.UserValue(entryValue).(*entryRead)
	if r == nil || r.bucket != bucket || r.key != key {
		return nil
	}
	rc.SetUserValue(entryValue, nil) // taken once
	return r
}

// entryOf is the entry of bucket/key, from the read started ahead for the
// request when there is one, else read now; a missing entry is
// NoSuchKey, or NoSuchBucket when the bucket is gone too.
func (b *Backend) entryOf(parent, ctx context.Context, bucket, key string) (catalog.Entry, error) {
	r := readAhead(parent, bucket, key)
	if r == nil {
		return b.entry(ctx, bucket, key)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return catalog.Entry{}, ctx.Err()
	}
	switch {
	case errors.Is(r.err, catalog.ErrNotFound):
		return r.entry, b.missingKey(ctx, bucket)
	case r.err != nil: // the early read failed (its own timeout): read again
		return b.entry(ctx, bucket, key)
	}
	return r.entry, nil
}
