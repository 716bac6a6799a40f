//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// s3Client runs one real S3 client's command line against the front.
type s3Client struct {
	t    *testing.T
	env  []string
	name string
}

func (c s3Client) run(args ...string) string {
	c.t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s: %s: %v\n%s", c.name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// clientEnv is this process's environment with AWS settings for the front
// and nothing that could send a client beyond 127.0.0.1.
func clientEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "RCLONE_") || k == "HTTP_PROXY" || k == "HTTPS_PROXY" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "AWS_ACCESS_KEY_ID=blob-access", "AWS_SECRET_ACCESS_KEY=blob-secret-key-123", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	return append(env, extra...)
}

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: `make clients` installs the S3 clients from Debian", tool)
		}
	}
}

// TestBlobServesRealS3Clients: aws cli, boto3, s3cmd and rclone, each with
// its own bucket: a put with user metadata, a multipart put above 64 MiB
// (each client's own part size), list V1 and V2 with prefix and delimiter,
// head, whole and ranged get, delete, bucket removal.
func TestBlobServesRealS3Clients(t *testing.T) {
	f := startBlob(t)
	dir := t.TempDir()
	big := make([]byte, 70<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	bigPath, smallPath := filepath.Join(dir, "big.bin"), filepath.Join(dir, "small.txt")
	if err := os.WriteFile(bigPath, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(smallPath, []byte("small object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + f.addr
	sameFile := func(t *testing.T, path string) {
		t.Helper()
		got, err := os.ReadFile(path)
		if err != nil || sha256.Sum256(got) != sha256.Sum256(big) {
			t.Fatalf("%s: %d bytes, not the 70 MiB written (%v)", path, len(got), err)
		}
	}
	// metadata as the front serves it to another client (minio-go)
	metaOf := func(t *testing.T, bucket, key string) map[string]string {
		t.Helper()
		st, err := f.s3.StatObject(context.Background(), bucket, key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatalf("stat %s/%s: %v", bucket, key, err)
		}
		return st.UserMetadata
	}

	t.Run("aws-cli", func(t *testing.T) {
		need(t, "aws")
		c := s3Client{t: t, env: clientEnv(), name: "aws"}
		aws := func(args ...string) string {
			return c.run(append([]string{"aws", "--endpoint-url", endpoint}, args...)...)
		}
		aws("s3", "mb", "s3://aws-bucket")
		aws("s3", "cp", bigPath, "s3://aws-bucket/dir/big.bin")
		aws("s3api", "put-object", "--bucket", "aws-bucket", "--key", "dir/sub/small.txt", "--body", smallPath, "--metadata", "owner=aws")
		if head := aws("s3api", "head-object", "--bucket", "aws-bucket", "--key", "dir/big.bin"); !strings.Contains(head, `"ContentLength": 73400320`) {
			t.Fatalf("head: %s", head)
		}
		if m := metaOf(t, "aws-bucket", "dir/sub/small.txt"); m["Owner"] != "aws" {
			t.Fatalf("metadata %v", m)
		}
		if ls := aws("s3", "ls", "s3://aws-bucket/dir/"); !strings.Contains(ls, "PRE sub/") || !strings.Contains(ls, "big.bin") {
			t.Fatalf("ls: %s", ls)
		}
		v2 := aws("s3api", "list-objects-v2", "--bucket", "aws-bucket", "--prefix", "dir/", "--delimiter", "/")
		v1 := aws("s3api", "list-objects", "--bucket", "aws-bucket", "--prefix", "dir/", "--delimiter", "/")
		for _, l := range []string{v1, v2} {
			if !strings.Contains(l, `"Prefix": "dir/sub/"`) || !strings.Contains(l, `"Key": "dir/big.bin"`) || strings.Contains(l, `"Key": "dir/sub/small.txt"`) {
				t.Fatalf("list with delimiter: %s", l)
			}
		}
		aws("s3", "cp", "s3://aws-bucket/dir/big.bin", filepath.Join(dir, "aws-back.bin"))
		sameFile(t, filepath.Join(dir, "aws-back.bin"))
		aws("s3api", "get-object", "--bucket", "aws-bucket", "--key", "dir/big.bin", "--range", "bytes=1000-1999", filepath.Join(dir, "aws-range"))
		if got, _ := os.ReadFile(filepath.Join(dir, "aws-range")); !bytes.Equal(got, big[1000:2000]) {
			t.Fatalf("ranged get: %d bytes", len(got))
		}
		aws("s3", "rm", "--recursive", "s3://aws-bucket/")
		aws("s3", "rb", "s3://aws-bucket")
	})

	t.Run("boto3", func(t *testing.T) {
		need(t, "python3")
		script := fmt.Sprintf(`
import boto3, hashlib, sys
from boto3.s3.transfer import TransferConfig
s3 = boto3.client("s3", endpoint_url=%q)
s3.create_bucket(Bucket="boto-bucket")
s3.upload_file(%q, "boto-bucket", "data/big.bin", Config=TransferConfig(multipart_threshold=8<<20, multipart_chunksize=8<<20))
s3.put_object(Bucket="boto-bucket", Key="data/x/small.txt", Body=b"small", Metadata={"owner": "boto3"})
head = s3.head_object(Bucket="boto-bucket", Key="data/x/small.txt")
assert head["Metadata"] == {"owner": "boto3"}, head["Metadata"]
for listing in (s3.list_objects_v2(Bucket="boto-bucket", Prefix="data/", Delimiter="/"),
                s3.list_objects(Bucket="boto-bucket", Prefix="data/", Delimiter="/")):
    keys = [o["Key"] for o in listing.get("Contents", [])]
    prefixes = [p["Prefix"] for p in listing.get("CommonPrefixes", [])]
    assert keys == ["data/big.bin"] and prefixes == ["data/x/"], (keys, prefixes)
s3.download_file("boto-bucket", "data/big.bin", %q)
part = s3.get_object(Bucket="boto-bucket", Key="data/big.bin", Range="bytes=5-14")["Body"].read()
want = open(%q, "rb").read()
assert part == want[5:15], part
assert hashlib.sha256(open(%q, "rb").read()).digest() == hashlib.sha256(want).digest()
gone = s3.delete_objects(Bucket="boto-bucket", Delete={"Objects": [{"Key": "data/big.bin"}, {"Key": "data/x/small.txt"}]})
assert len(gone["Deleted"]) == 2, gone
s3.delete_bucket(Bucket="boto-bucket")
print("boto3", boto3.__version__, "ok")
`, endpoint, bigPath, filepath.Join(dir, "boto-back.bin"), bigPath, filepath.Join(dir, "boto-back.bin"))
		c := s3Client{t: t, env: clientEnv(), name: "boto3"}
		t.Log(strings.TrimSpace(c.run("python3", "-c", script)))
	})

	t.Run("s3cmd", func(t *testing.T) {
		need(t, "s3cmd")
		cfg := filepath.Join(dir, "s3cfg")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[default]\naccess_key = blob-access\nsecret_key = blob-secret-key-123\n"+
			"host_base = %s\nhost_bucket = %s\nuse_https = False\nsignature_v2 = False\nbucket_location = us-east-1\n", f.addr, f.addr)), 0o600); err != nil {
			t.Fatal(err)
		}
		c := s3Client{t: t, env: clientEnv(), name: "s3cmd"}
		s3cmd := func(args ...string) string { return c.run(append([]string{"s3cmd", "-c", cfg}, args...)...) }
		s3cmd("mb", "s3://s3cmd-bucket")
		s3cmd("put", bigPath, "s3://s3cmd-bucket/d/big.bin") // 15 MiB parts
		s3cmd("put", "--add-header=x-amz-meta-owner:s3cmd", smallPath, "s3://s3cmd-bucket/d/e/small.txt")
		if m := metaOf(t, "s3cmd-bucket", "d/e/small.txt"); m["Owner"] != "s3cmd" || m["S3cmd-Attrs"] == "" {
			t.Fatalf("metadata %v", m)
		}
		if ls := s3cmd("ls", "s3://s3cmd-bucket/d/"); !strings.Contains(ls, "DIR") || !strings.Contains(ls, "s3://s3cmd-bucket/d/big.bin") {
			t.Fatalf("ls: %s", ls)
		}
		if info := s3cmd("info", "s3://s3cmd-bucket/d/big.bin"); !strings.Contains(info, "73400320") {
			t.Fatalf("info: %s", info)
		}
		s3cmd("get", "s3://s3cmd-bucket/d/big.bin", filepath.Join(dir, "s3cmd-back.bin"))
		sameFile(t, filepath.Join(dir, "s3cmd-back.bin"))
		s3cmd("sync", bigPath, "s3://s3cmd-bucket/d/big.bin") // identical: nothing to send
		s3cmd("del", "--recursive", "--force", "s3://s3cmd-bucket/")
		s3cmd("rb", "s3://s3cmd-bucket")
	})

	t.Run("rclone", func(t *testing.T) {
		need(t, "rclone")
		c := s3Client{t: t, name: "rclone", env: clientEnv("RCLONE_CONFIG_H_TYPE=s3", "RCLONE_CONFIG_H_PROVIDER=Other",
			"RCLONE_CONFIG_H_ENDPOINT="+endpoint, "RCLONE_CONFIG_H_ACCESS_KEY_ID=blob-access",
			"RCLONE_CONFIG_H_SECRET_ACCESS_KEY=blob-secret-key-123", "RCLONE_CONFIG_H_FORCE_PATH_STYLE=true",
			"RCLONE_CONFIG="+filepath.Join(dir, "rclone.conf"))}
		if err := os.WriteFile(filepath.Join(dir, "rclone.conf"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		rclone := func(args ...string) string { return c.run(append([]string{"rclone", "-q"}, args...)...) }
		rclone("mkdir", "h:rclone-bucket")
		rclone("copyto", "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", bigPath, "h:rclone-bucket/r/big.bin")
		rclone("copyto", "--header-upload", "X-Amz-Meta-Owner: rclone", smallPath, "h:rclone-bucket/r/s/small.txt")
		if m := metaOf(t, "rclone-bucket", "r/s/small.txt"); m["Owner"] != "rclone" || m["Mtime"] == "" {
			t.Fatalf("metadata %v", m)
		}
		if m := metaOf(t, "rclone-bucket", "r/big.bin"); m["Md5chksum"] == "" {
			t.Fatalf("multipart metadata %v", m)
		}
		if lsf := rclone("lsf", "h:rclone-bucket/r"); lsf != "big.bin\ns/\n" {
			t.Fatalf("lsf: %q", lsf)
		}
		if part := rclone("cat", "--offset", "100", "--count", "50", "h:rclone-bucket/r/big.bin"); part != string(big[100:150]) {
			t.Fatalf("ranged cat: %d bytes", len(part))
		}
		rclone("copyto", "h:rclone-bucket/r/big.bin", filepath.Join(dir, "rclone-back.bin"))
		sameFile(t, filepath.Join(dir, "rclone-back.bin"))
		if sum := rclone("md5sum", "h:rclone-bucket/r/big.bin"); !strings.HasPrefix(sum, fmt.Sprintf("%x ", md5.Sum(big))) {
			t.Fatalf("rclone md5sum (from the multipart upload's md5chksum metadata): %q", sum)
		}
		rclone("purge", "h:rclone-bucket")
		if exists, err := f.s3.BucketExists(context.Background(), "rclone-bucket"); err != nil || exists {
			t.Fatalf("bucket after rclone purge: exists=%v %v", exists, err)
		}
	})
}
