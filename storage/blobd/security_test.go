package blobd

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/versity/versitygw/s3err"
)

func TestAdminAPIIsBehindItsTokens(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, `admin_tokens = ["blob-admin-token-0123"]`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	posted := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posted++
		}
		io.WriteString(w, "{}")
	})
	h, err := c.adminGuard(mux, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	call := func(method, path, token string) int {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{"POST", "/v1/gc", "", 401},
		{"POST", "/v1/scrub", "wrong-token-wrong-token", 401},
		{"POST", "/v1/safe-mode/confirm", "", 401},
		{"GET", "/v1/status", "", 200},
		{"GET", "/v1/health", "", 200},
		{"GET", "/v1/objects?bucket=b&key=k", "", 401}, // object names are data: a token even with anonymous reads
		{"HEAD", "/v1/objects?bucket=b&key=k", "", 401},
		{"GET", "/v1/obj%65cts?bucket=b&key=k", "", 401},
		{"GET", "/v1/anything-new", "", 401}, // only status and metrics are open to anonymous reads
		{"GET", "/v1/objects?bucket=b&key=k", "blob-admin-token-0123", 200},
		{"POST", "/v1/gc", "blob-admin-token-0123", 200},
	} {
		if got := call(c.method, c.path, c.token); got != c.want {
			t.Errorf("%s %s token %q: %d, want %d", c.method, c.path, c.token, got, c.want)
		}
	}
	if posted != 1 {
		t.Fatalf("%d POSTs reached the admin API, want the one with the token", posted)
	}
	// closed reads, and no tokens at all
	closed, err := LoadConfig(writeConfig(t, "admin_anonymous_read = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ = closed.adminGuard(mux, hclog.NewNullLogger())
	srv2 := httptest.NewServer(h)
	defer srv2.Close()
	for path, want := range map[string]int{"/v1/status": 401, "/v1/metrics": 401, "/v1/health": 200} {
		resp, err := http.Get(srv2.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s with closed reads: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestSecuritySettingsAreCheckedAtLoad(t *testing.T) {
	for extra, want := range map[string]string{
		`admin_tokens = ["short"]`:                                      "at least 16 characters",
		`tls { cert_file = "/nonexistent.pem" }`:                        "cert_file and key_file go together",
		"tls {\n  cert_file = \"/no.pem\"\n  key_file = \"/no.pem\"\n}": "no.pem",
		`admin_tokens_file = "/nonexistent"`:                            "admin_tokens_file",
	} {
		_, err := LoadConfig(writeConfig(t, extra+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", extra, err, want)
		}
	}
}

// TestS3AnswerKeepsTheS3StatusOfAMiss: the admin API answers a missing key
// or bucket with S3's 404 and code, whichever form versitygw gives the
// error, and anything else with 503.
func TestS3AnswerKeepsTheS3StatusOfAMiss(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{s3err.GetAPIError(s3err.ErrNoSuchKey), 404, "NoSuchKey"},
		{fmt.Errorf("wrapped: %w", s3err.GetBucketErr(s3err.ErrNoSuchBucket, "b")), 404, "NoSuchBucket"},
		{errors.New("consul: timeout"), 503, "consul: timeout"},
	} {
		if status, msg := s3Answer(c.err); status != c.status || !strings.HasPrefix(msg, c.code) {
			t.Errorf("%v: %d %q, want %d %s", c.err, status, msg, c.status, c.code)
		}
	}
}
