package testbed

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/localcluster"
)

// inputBucket holds the dataset the stream's tasks read, as the paper's
// queries read their tables from HDFS (Section 6, Figure 12).
const inputBucket = "testbed-input"

// blobTier is the harvest-blob front the run starts over the clients'
// MinIO servers, with the dataset it wrote before the span.
type blobTier struct {
	proc                 localcluster.Agent
	addr, admin, log     string
	accessKey, secretKey string
	adminToken           string
	client               *minio.Client
	// written holds each acknowledged object's SHA-256.
	written map[string]string
}

// BlobReport is what the blob tier did during a run: the front's own
// counters over the span and the drain, and the dataset read back at the
// end.
type BlobReport struct {
	Objects int `json:"objects"` // acknowledged before the span
	// Reads, ReadFailures (every replica busy, down, bad or gone) and
	// BusyDenials (replicas skipped as busy) are the front's counters
	// (harvest_blob_reads_total and the like) from the span's start;
	// Saturated counts requests refused with SlowDown.
	Reads        int `json:"reads"`
	ReadFailures int `json:"read_failures"`
	BusyDenials  int `json:"busy_denials"`
	Saturated    int `json:"saturated"`
	// Lost are acknowledged objects that could not be read back whole
	// (same SHA-256) at the end, with a minute of retries each.
	Lost       int      `json:"lost"`
	LostErrors []string `json:"lost_errors,omitempty"`
}

// startBlob writes harvest-blob's config (its state under the cluster's
// KV prefix, where the drivers' busy flags are; one node per client's
// MinIO, with the client's tenant), starts it and waits until it answers.
func startBlob(ctx context.Context, c Config, st *localcluster.State, nodes []localcluster.NodeSpec) (*blobTier, error) {
	b := &blobTier{addr: fmt.Sprintf("127.0.0.1:%d", st.SparePort(2)), admin: fmt.Sprintf("127.0.0.1:%d", st.SparePort(3)),
		log: filepath.Join(c.Out, "blob.log"), accessKey: "testbed-" + randomHex(6), secretKey: randomHex(20), adminToken: randomHex(16),
		written: map[string]string{}}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "log_level = \"INFO\"\nlisten = %q\nadmin_listen = %q\naccess_key = %q\nsecret_key = %q\nadmin_tokens = [%q]\n"+
		"consul {\n  address = %q\n  prefix  = %q\n}\n", b.addr, b.admin, b.accessKey, b.secretKey, b.adminToken, st.ConsulAddr(), contract.DefaultKVPrefix)
	for _, m := range st.MinIO {
		spec, ok := specOf(nodes, m.Node)
		if !ok {
			continue
		}
		fmt.Fprintf(&cfg, "node %q {\n  endpoint = %q\n  access_key = %q\n  secret_key = %q\n  tenant = %q\n  environment = %q\n  rack = %q\n  capacity_mb = %d\n}\n",
			"store-"+m.Node, m.HTTPAddr, m.AccessKey, m.SecretKey, spec.Tenant, spec.Environment, spec.Rack, 4096)
	}
	config := filepath.Join(c.Out, "blob.hcl")
	if err := os.WriteFile(config, []byte(cfg.String()), 0o600); err != nil {
		return nil, err
	}
	var err error
	if b.proc, err = startAgent(c, "blob", "harvest-blob", config, b.log); err != nil {
		return nil, err
	}
	b.client, err = minio.New(b.addr, &minio.Options{Creds: credentials.NewStaticV4(b.accessKey, b.secretKey, ""), MaxRetries: 1})
	if err != nil {
		b.stop()
		return nil, err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		err = b.client.MakeBucket(ctx, inputBucket, minio.MakeBucketOptions{})
		if err == nil {
			return b, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b.stop()
			return nil, fmt.Errorf("harvest-blob made no bucket within a minute: %v (log %s)", err, b.log)
		}
	}
}

func specOf(nodes []localcluster.NodeSpec, name string) (localcluster.NodeSpec, bool) {
	for _, n := range nodes {
		if n.Name == name {
			return n, true
		}
	}
	return localcluster.NodeSpec{}, false
}

// stop sends SIGTERM and waits (SIGKILL after 30 s).
func (b *blobTier) stop() { localcluster.StopProcess(b.proc, 30*time.Second) }

// objectKey is the dataset's i-th object; a task's shell names it alike.
func objectKey(i int) string { return fmt.Sprintf("table-%d", i) }

// seed writes n objects of size bytes of random data, retrying each for a
// minute (the front's nodes come up with its first health checks), and
// keeps their digests.
func (b *blobTier) seed(ctx context.Context, n, size int) error {
	for i := range n {
		data := make([]byte, size)
		if _, err := rand.Read(data); err != nil {
			return err
		}
		var err error
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
			_, err = b.client.PutObject(ctx, inputBucket, objectKey(i), bytes.NewReader(data), int64(size), minio.PutObjectOptions{})
			if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("writing %s/%s: %w (log %s)", inputBucket, objectKey(i), err, b.log)
		}
		sum := sha256.Sum256(data)
		b.written[objectKey(i)] = hex.EncodeToString(sum[:])
	}
	return nil
}

// verify reads every acknowledged object back and counts those that do
// not come back whole within a minute of retries.
func (b *blobTier) verify(ctx context.Context, rep *BlobReport) {
	rep.Objects = len(b.written)
	for key, want := range b.written {
		var err error
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
			err = b.readWhole(ctx, key, want)
			if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			rep.Lost++
			rep.LostErrors = append(rep.LostErrors, fmt.Sprintf("%s: %v", key, err))
		}
	}
}

func (b *blobTier) readWhole(ctx context.Context, key, want string) error {
	obj, err := b.client.GetObject(ctx, inputBucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	h := sha256.New()
	if _, err := io.Copy(h, obj); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("SHA-256 %s, written %s", got, want)
	}
	return nil
}

// counters reads the front's read counters from its /v1/metrics.
func (b *blobTier) counters(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.admin+"/v1/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+b.adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("harvest-blob /v1/metrics: %s", resp.Status)
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	out := map[string]float64{}
	for {
		f := &dto.MetricFamily{}
		if err := dec.Decode(f); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		for _, m := range f.GetMetric() {
			out[f.GetName()] += m.GetCounter().GetValue()
		}
	}
}

// readCounts fills rep's counters with what the front counted since before.
func readCounts(rep *BlobReport, before, after map[string]float64) {
	diff := func(name string) int { return int(math.Round(after[name] - before[name])) }
	rep.Reads, rep.ReadFailures = diff("harvest_blob_reads_total"), diff("harvest_blob_read_failures_total")
	rep.BusyDenials, rep.Saturated = diff("harvest_blob_busy_denials_total"), diff("harvest_blob_node_saturated_total")
}

// emptySHA256 is the payload hash of a GET: S3 servers (versitygw among
// them) refuse a signed request without x-amz-content-sha256, which curl
// sends (and signs) only when given.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// readCommand is the shell a task starts beside its sleep: it reads object
// (first + alloc index) mod n of the dataset through the front's S3 API
// with curl (SigV4) in the background, and says on stderr when the read
// failed (the front counts the failure too). The task waits for it after
// its sleep, so it lasts its length unless the read takes longer: under
// the harvest driver the read runs at the harvested tasks' idle priority.
func readCommand(first, n int) string {
	return fmt.Sprintf(`k=$(( (%d + ${NOMAD_ALLOC_INDEX}) %% %d )); `+
		`( curl -sS -o /dev/null --max-time 60 --fail --aws-sigv4 aws:amz:us-east-1:s3 --user "$HARVEST_S3_ACCESS_KEY:$HARVEST_S3_SECRET_KEY" `+
		`-H "x-amz-content-sha256: %s" `+
		`"$HARVEST_S3_ENDPOINT/%s/table-$k" || echo "testbed: reading table-$k failed" >&2 ) & `, first, n, emptySHA256, inputBucket)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
