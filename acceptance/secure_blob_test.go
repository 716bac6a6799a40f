//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// startSecureBlob runs harvest-blob on the secure cluster: HTTPS on its S3
// and admin listeners, an admin token, its own Consul token (blob.consul),
// and each storage node's own credentials read from the Nomad variable
// that holds them (as the platform job's template does).
func startSecureBlob(t *testing.T) (s3 string, admin string) {
	t.Helper()
	sec := requireSecure(t)
	v, _, err := nomadClient(t).Variables().Read("nomad/jobs/harvest-storage", nil)
	if err != nil {
		t.Fatal(err)
	}
	var nodes strings.Builder
	for i, m := range cluster.MinIO {
		// the node's own name, rack and credentials (from the variable)
		key := strings.ReplaceAll(m.Node, "-", "_")
		n := clusterNodeBlock(i, 8192)
		n.name, n.rack = m.Node, cluster.NomadClients[i].Meta["harvest_rack"]
		n.accessKey, n.secretKey = v.Items[key+"_access_key"], v.Items[key+"_secret_key"]
		n.write(&nodes)
	}
	s3, admin = fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(2)), fmt.Sprintf("127.0.0.1:%d", cluster.SparePort(3))
	config := filepath.Join(t.TempDir(), "blob.hcl")
	if err := os.WriteFile(config, []byte(blobFrontHead(s3, admin)+fmt.Sprintf(`
replicas     = 2
tls {
  cert_file = %q
  key_file  = %q
}
admin_tls {
  cert_file = %q
  key_file  = %q
}
consul {
  address = %q
  ca_file = %q
  token   = %q
  prefix  = "harvest/"
}
%s`, sec.HarvestCert, sec.HarvestKey, sec.HarvestCert, sec.HarvestKey, cluster.ConsulAddr(), sec.CAFile,
		tokens.blobConsul, nodes.String())), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath, _ := startDaemonStoppable(t, blobBinary(), "agent", "-config", config)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := harvestHTTP().Get("https://" + admin + "/v1/health"); err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", s3); err == nil {
				c.Close()
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("harvest-blob does not serve after 60 s (log %s)", logPath)
		}
	}
	return s3, admin
}

// TestSecureBlobServesRealS3ClientsOverHTTPSAndRefusesBadSignatures: the
// blob front on the secure cluster, over HTTPS only: the aws cli and s3cmd
// (trusting the cluster's CA) and minio-go write and read objects back
// byte-identical; plain HTTP gets nothing; a request signed with a wrong
// secret is refused (SignatureDoesNotMatch) and writes nothing; the admin
// API's POSTs want the admin token.
func TestSecureBlobServesRealS3ClientsOverHTTPSAndRefusesBadSignatures(t *testing.T) {
	sec := requireSecure(t)
	s3, admin := startSecureBlob(t)
	endpoint := "https://" + s3
	dir := t.TempDir()
	data := make([]byte, 3<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "object.bin")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)
	same := func(who, path string) {
		t.Helper()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(got) != want {
			t.Fatalf("%s read back %d bytes that differ from what was written", who, len(got))
		}
	}

	t.Run("aws-cli", func(t *testing.T) {
		need(t, "aws")
		c := s3Client{t: t, env: clientEnv(), name: "aws"}
		aws := func(args ...string) string {
			return c.run(append([]string{"aws", "--endpoint-url", endpoint, "--ca-bundle", sec.CAFile}, args...)...)
		}
		aws("s3", "mb", "s3://secure-aws")
		aws("s3", "cp", src, "s3://secure-aws/object.bin")
		aws("s3", "cp", "s3://secure-aws/object.bin", filepath.Join(dir, "aws.bin"))
		same("aws", filepath.Join(dir, "aws.bin"))
	})
	t.Run("s3cmd", func(t *testing.T) {
		need(t, "s3cmd")
		c := s3Client{t: t, env: clientEnv(), name: "s3cmd"}
		s3cmd := func(args ...string) string {
			base := []string{"s3cmd", "--config=/dev/null", "--access_key=blob-access", "--secret_key=blob-secret-key-123",
				"--host=" + s3, "--host-bucket=" + s3, "--ssl", "--ca-certs=" + sec.CAFile, "--region=us-east-1", "--no-check-md5"}
			return c.run(append(base, args...)...)
		}
		s3cmd("mb", "s3://secure-s3cmd")
		s3cmd("put", src, "s3://secure-s3cmd/object.bin")
		s3cmd("get", "--force", "s3://secure-s3cmd/object.bin", filepath.Join(dir, "s3cmd.bin"))
		same("s3cmd", filepath.Join(dir, "s3cmd.bin"))
	})

	client := func(secret string) *minio.Client {
		hc := harvestHTTP().Transport
		mc, err := minio.New(s3, &minio.Options{Creds: credentials.NewStaticV4("blob-access", secret, ""), Secure: true, Transport: hc})
		if err != nil {
			t.Fatal(err)
		}
		return mc
	}
	ctx := context.Background()
	good := client("blob-secret-key-123")
	if err := good.MakeBucket(ctx, "secure-go", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := good.PutObject(ctx, "secure-go", "object.bin", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, err := good.GetObject(ctx, "secure-go", "object.bin", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(obj)
	if err != nil || sha256.Sum256(got) != want {
		t.Fatalf("minio-go read back %d bytes (%v)", len(got), err)
	}

	// a wrong signature over TLS: refused, nothing written
	_, err = client("not-the-secret").PutObject(ctx, "secure-go", "forged.bin", bytes.NewReader([]byte("forged")), 6, minio.PutObjectOptions{})
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) || resp.Code != "SignatureDoesNotMatch" || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a wrongly signed PUT: %v, want 403 SignatureDoesNotMatch", err)
	}
	if _, err := good.StatObject(ctx, "secure-go", "forged.bin", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
		t.Fatalf("after the refused PUT the object is there, or cannot be asked about: %v", err)
	}
	// plain HTTP on the S3 port gets no S3 answer
	if r, err := http.Get("http://" + s3 + "/secure-go/object.bin"); err == nil {
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if bytes.Equal(body, data) || r.StatusCode == http.StatusOK {
			t.Fatal("the S3 listener answered plain HTTP")
		}
	}
	// the admin API: POSTs want the token
	for token, want := range map[string]int{"": 401, "wrong-admin-token-xx": 401, blobAdminToken: 200} {
		req, _ := http.NewRequest(http.MethodPost, "https://"+admin+"/v1/safe-mode/confirm", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		r, err := harvestHTTP().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != want {
			t.Errorf("admin POST with token %q: %d, want %d", token, r.StatusCode, want)
		}
	}
}
