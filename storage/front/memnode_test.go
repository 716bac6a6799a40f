package front

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memNode is a storage node's S3 API in memory (PUT, GET, DELETE of
// objects, ETag the body's MD5), enough for writes and repairs.
type memNode struct {
	mu      sync.Mutex
	objects map[string][]byte // by path: /bucket/name
	damage  bool              // flip the first byte of what a PUT stores, as a bad link or disk would
	// slowDowns is how many GETs to answer 503 SlowDown before serving
	// again, as a node restarting or full of requests would
	slowDowns int
	// cutAfter, when above 0, ends the next GET's connection after that many
	// bytes of the body, as a node killed mid-answer would
	cutAfter int
	ranges   []string // the Range headers of the GETs served
}

// get returns a copy of an object's bytes (nil when absent).
func (m *memNode) get(name string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.objects["/"+DataBucket+"/"+name])
}

// set plants an object's bytes (nil removes it), as a disk fault would.
func (m *memNode) set(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if data == nil {
		delete(m.objects, "/"+DataBucket+"/"+name)
		return
	}
	m.objects["/"+DataBucket+"/"+name] = data
}

// count is how many objects the node holds.
func (m *memNode) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objects)
}

// fail makes the node answer the next n GETs with SlowDown.
func (m *memNode) fail(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.slowDowns = n
}

// cut makes the node end its next GET's connection after n bytes.
func (m *memNode) cut(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cutAfter = n
}

// rangesSeen are the Range headers of the GETs the node served.
func (m *memNode) rangesSeen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.ranges...)
}

func (m *memNode) has(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.objects["/"+DataBucket+"/"+name]
	return ok
}

func (m *memNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("location") {
		fmt.Fprint(w, `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">us-east-1</LocationConstraint>`)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
			data = unchunk(data)
		}
		if m.damage && len(data) > 0 {
			data[0] ^= 0xff
		}
		m.objects[r.URL.Path] = data
		sum := md5.Sum(data)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
	case http.MethodGet, http.MethodHead:
		if r.Method == http.MethodGet && m.slowDowns > 0 {
			m.slowDowns--
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<Error><Code>SlowDown</Code><Message>Please reduce your request rate</Message></Error>`)
			return
		}
		if r.Method == http.MethodGet {
			m.ranges = append(m.ranges, r.Header.Get("Range"))
		}
		data, ok := m.objects[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `<Error><Code>NoSuchKey</Code></Error>`)
			return
		}
		sum := md5.Sum(data)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		var from, to int
		if n, _ := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &from, &to); n == 2 && from <= to && to < len(data) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(data)))
			data = data[from : to+1]
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.WriteHeader(http.StatusPartialContent)
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		}
		if r.Method == http.MethodGet && m.cutAfter > 0 && m.cutAfter < len(data) {
			n := m.cutAfter
			m.cutAfter = 0
			_, _ = w.Write(data[:n])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		if r.Method == http.MethodGet {
			_, _ = w.Write(data)
		}
	case http.MethodDelete:
		delete(m.objects, r.URL.Path)
		w.WriteHeader(http.StatusNoContent)
	}
}

// unchunk decodes an aws-chunked body ("<hex size>;chunk-signature=...\r\n
// <data>\r\n" until a chunk of size 0), as minio-go sends small objects
// over plain HTTP.
func unchunk(body []byte) []byte {
	var out []byte
	for len(body) > 0 {
		head, rest, ok := bytes.Cut(body, []byte("\r\n"))
		if !ok {
			break
		}
		size, err := strconv.ParseInt(string(bytes.SplitN(head, []byte(";"), 2)[0]), 16, 64)
		if err != nil || size == 0 || int64(len(rest)) < size {
			break
		}
		out = append(out, rest[:size]...)
		body = bytes.TrimPrefix(rest[size:], []byte("\r\n"))
	}
	return out
}
