// Package diskfree owns reading a storage node's free disk space from the
// node itself: MinIO publishes its drives' free bytes in its Prometheus
// metrics (v3 API, /minio/metrics/v3/system/drive), behind a bearer token
// signed with the node's own credentials (what `mc admin prometheus
// generate` makes). The front reads it at its health checks so that a
// harvested write never takes a primary tenant's disk below its floor,
// whatever the declared capacity says.
package diskfree

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Path is where MinIO serves its drive metrics.
const Path = "/minio/metrics/v3/system/drive"

// Metric is the free bytes of each drive.
const Metric = "minio_system_drive_free_bytes"

// Token is a bearer token MinIO's metrics API accepts: HS512-signed with
// the secret key, subject the access key, issuer "prometheus".
func Token(accessKey, secretKey string, now time.Time) (string, error) {
	return jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{
		"exp": now.Add(time.Hour).Unix(), "sub": accessKey, "iss": "prometheus",
	}).SignedString([]byte(secretKey))
}

// ErrNoMetric says the exposition had no drive free-space series.
var ErrNoMetric = errors.New("diskfree: no " + Metric + " series")

// Parse reads the free bytes from a Prometheus text exposition: the least
// over the node's drives (a write lands on every drive of an erasure set;
// a single-drive node has one). It reads only the lines of Metric (name,
// optional {labels}, value, optional timestamp) and ignores the rest; a
// node's answer is not trusted to be well formed (prometheus/common's
// parser panics on some malformed input, found by FuzzParse).
func Parse(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(io.LimitReader(r, 4<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	least, found := math.Inf(1), false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, Metric)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				return 0, fmt.Errorf("diskfree: unterminated labels in %q", line)
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 || len(fields) > 2 {
			return 0, fmt.Errorf("diskfree: no value in %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || math.IsNaN(v) || v < 0 {
			return 0, fmt.Errorf("diskfree: %s = %q", Metric, fields[0])
		}
		least, found = math.Min(least, v), true
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("diskfree: %w", err)
	}
	if !found {
		return 0, ErrNoMetric
	}
	return int64(math.Min(least, math.MaxInt64/2)), nil
}

// Read asks a node (base URL such as http://127.0.0.1:9000) for its free
// bytes.
func Read(ctx context.Context, client *http.Client, base, accessKey, secretKey string) (int64, error) {
	tok, err := Token(accessKey, secretKey, time.Now())
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+Path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("diskfree: %s answered %s", base+Path, resp.Status)
	}
	return Parse(resp.Body)
}
