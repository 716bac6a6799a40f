package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// call sends one request to the placer's API and returns the status and
// the body.
func call(t *testing.T, srv *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// errorOf is the message of an {"error": "..."} body ("" if it is not one).
func errorOf(body string) string {
	var e struct{ Error string }
	if json.Unmarshal([]byte(body), &e) != nil {
		return ""
	}
	return e.Error
}

func TestTenantDeclarationsRoundTrip(t *testing.T) {
	a, _, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	if code, body := call(t, srv, "GET", "/v1/tenants/search/frontend", ""); code != 404 || !strings.Contains(body, `"error":"tenant search/frontend is not declared"`) {
		t.Fatalf("undeclared: %d %s", code, body)
	}
	if code, body := call(t, srv, "GET", "/v1/tenants", ""); code != 200 || body != `{"tenants":[]}` {
		t.Fatalf("empty list: %d %s", code, body)
	}
	full := `{"environment":"search","function":"frontend","storage_mb":10240,"reserve_cpu":0.5,"reserve_memory_mb":512}`
	if code, body := call(t, srv, "PUT", "/v1/tenants/search/frontend", `{"storage_mb": 10240, "reserve_cpu": 0.5, "reserve_memory_mb": 512}`); code != 200 || body != full {
		t.Fatalf("put: %d %s", code, body)
	}
	if code, body := call(t, srv, "GET", "/v1/tenants/search/frontend", ""); code != 200 || body != full {
		t.Fatalf("get: %d %s", code, body)
	}
	// only what is declared comes back; a second PUT replaces the first
	partial := `{"environment":"ads","function":"indexer","reserve_cpu":0}`
	if code, body := call(t, srv, "PUT", "/v1/tenants/ads/indexer", `{"reserve_cpu":0}`); code != 200 || body != partial {
		t.Fatalf("partial put: %d %s", code, body)
	}
	if code, body := call(t, srv, "PUT", "/v1/tenants/search/frontend", `{}`); code != 200 || body != `{"environment":"search","function":"frontend"}` {
		t.Fatalf("empty put: %d %s", code, body)
	}
	want := `{"tenants":[{"environment":"ads","function":"indexer","reserve_cpu":0},{"environment":"search","function":"frontend"}]}`
	if code, body := call(t, srv, "GET", "/v1/tenants", ""); code != 200 || body != want {
		t.Fatalf("list: %d %s", code, body)
	}
	for range 2 { // idempotent
		if code, body := call(t, srv, "DELETE", "/v1/tenants/ads/indexer", ""); code != 204 || body != "" {
			t.Fatalf("delete: %d %s", code, body)
		}
	}
	if code, _ := call(t, srv, "GET", "/v1/tenants/ads/indexer", ""); code != 404 {
		t.Fatalf("deleted declaration still served: %d", code)
	}
}

func TestTenantDeclarationsRefuseBadInput(t *testing.T) {
	a, _, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	for _, c := range []struct{ method, path, body, want string }{
		{"PUT", "/v1/tenants/a/b", `{"storage_mb":-1}`, "storage_mb -1: want a number >= 0"},
		{"PUT", "/v1/tenants/a/b", `{"reserve_cpu":-0.5}`, "reserve_cpu -0.5: want a number >= 0"},
		{"PUT", "/v1/tenants/a/b", `{"reserve_memory_mb":-512}`, "reserve_memory_mb -512"},
		{"PUT", "/v1/tenants/a/b", `{"storage_gb":1}`, `unknown field "storage_gb"`},
		{"PUT", "/v1/tenants/a/b", `{"environment":"a","function":"b"}`, `unknown field "environment"`},
		{"PUT", "/v1/tenants/a/b", `{"storage_mb":1.5}`, "cannot unmarshal number 1.5"},
		{"PUT", "/v1/tenants/a/b", `{"reserve_cpu":"1"}`, "cannot unmarshal string"},
		{"PUT", "/v1/tenants/a/b", `{} {}`, "found more after it"},
		{"PUT", "/v1/tenants/a/b", `[]`, "want a JSON object"},
		{"PUT", "/v1/tenants/a/b", ``, "want a JSON object"},
		{"PUT", "/v1/tenants/a/b", `{"storage_mb":`, "unexpected EOF"},
		{"PUT", "/v1/tenants/-a/b", `{}`, `environment "-a" must be 1-63 letters`},
		{"PUT", "/v1/tenants/a/b%2Fc", `{}`, `function "b/c"`},
		{"GET", "/v1/tenants/a/" + strings.Repeat("x", 64), ``, "must be 1-63"},
		{"DELETE", "/v1/tenants/a/.b", ``, `function ".b"`},
	} {
		code, body := call(t, srv, c.method, c.path, c.body)
		if code != 400 || !strings.Contains(errorOf(body), c.want) {
			t.Errorf("%s %s %s: %d %s, want 400 with %q", c.method, c.path, c.body, code, body, c.want)
		}
	}
	if code, body := call(t, srv, "GET", "/v1/tenants", ""); body != `{"tenants":[]}` {
		t.Fatalf("a refused PUT stored something: %d %s", code, body)
	}
}

func TestCorruptTenantDeclarationIs500NamingTheKey(t *testing.T) {
	a, kv, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	for value, want := range map[string]string{
		"garbage":                                "invalid character",
		`{"environment":"other","function":"b"}`: `holds tenant "other/b"`,
		`{"environment":"a","function":"b","storage_mb":-3}`: "storage_mb -3",
	} {
		kv.Put("harvest/declarations/tenants/a/b", []byte(value))
		for _, path := range []string{"/v1/tenants/a/b", "/v1/tenants"} {
			code, body := call(t, srv, "GET", path, "")
			if msg := errorOf(body); code != 500 || !strings.Contains(msg, `"harvest/declarations/tenants/a/b"`) || !strings.Contains(msg, want) {
				t.Errorf("%s over %s: %d %s, want 500 naming the key and %q", path, value, code, body, want)
			}
		}
	}
	kv.Put("harvest/declarations/tenants/a/b", []byte(`{"environment":"a","function":"b"}`))
	kv.Put("harvest/declarations/tenants/stray", []byte(`{}`))
	if code, body := call(t, srv, "GET", "/v1/tenants", ""); code != 500 || !strings.Contains(body, "declarations/tenants/stray") {
		t.Fatalf("a key naming no tenant: %d %s", code, body)
	}
}
