package diskfree

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const sample = `# HELP minio_system_drive_free_bytes Total storage free on a drive in bytes
# TYPE minio_system_drive_free_bytes gauge
minio_system_drive_free_bytes{drive="/d1",drive_index="0",pool_index="0",server="127.0.0.1:9000",set_index="0"} 7.4095816704e+10
minio_system_drive_free_bytes{drive="/d2",drive_index="1",pool_index="0",server="127.0.0.1:9000",set_index="0"} 5e+09
# HELP minio_system_drive_total_bytes Total storage available on a drive in bytes
# TYPE minio_system_drive_total_bytes gauge
minio_system_drive_total_bytes{drive="/d1"} 9.7793294336e+10
`

func TestParseTakesTheLeastFreeDrive(t *testing.T) {
	got, err := Parse(strings.NewReader(sample))
	if err != nil || got != 5e9 {
		t.Fatalf("Parse = %d, %v; want 5000000000", got, err)
	}
	if _, err := Parse(strings.NewReader("# nothing\nother_metric 1\n")); !errors.Is(err, ErrNoMetric) {
		t.Fatalf("no series: %v", err)
	}
	if _, err := Parse(strings.NewReader("minio_system_drive_free_bytes{ 1\n")); err == nil {
		t.Fatal("a broken exposition parsed")
	}
}

// TestReadSendsATokenSignedWithTheNodeSecret: the node sees a bearer token
// that verifies with its secret and names its access key and issuer.
func TestReadSendsATokenSignedWithTheNodeSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		claims := jwt.MapClaims{}
		if _, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte("node-secret"), nil }); err != nil ||
			claims["sub"] != "node-access" || claims["iss"] != "prometheus" || r.URL.Path != Path {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(sample))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := Read(ctx, srv.Client(), srv.URL, "node-access", "node-secret"); err != nil || got != 5e9 {
		t.Fatalf("Read = %d, %v", got, err)
	}
	if _, err := Read(ctx, srv.Client(), srv.URL, "node-access", "wrong"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("a token signed with the wrong secret: %v", err)
	}
}

// FuzzParse: whatever a node answers, Parse returns a non-negative value
// or an error, never panics.
func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("minio_system_drive_free_bytes NaN\n")
	f.Add("minio_system_drive_free_bytes -1\n")
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := Parse(strings.NewReader(s)); err == nil && v < 0 {
			t.Fatalf("negative free bytes %d from %q", v, s)
		}
	})
}
