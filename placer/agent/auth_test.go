package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/placer/config"
)

const adminToken = "placer-admin-token-0123456789"

// fakeACLNomad answers Nomad's ACL endpoints for a few known tokens, and
// only with the token asking (as Nomad does: a token reads its own
// policies and roles).
type fakeACLNomad struct {
	tokens   map[string]nomadapi.ACLToken // by secret
	policies map[string]string            // name -> rules
	roles    map[string]nomadapi.ACLRole  // by ID
	calls    atomic.Int64
	down     atomic.Bool
}

func (f *fakeACLNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if f.down.Load() {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	tok, ok := f.tokens[r.Header.Get("X-Nomad-Token")]
	if !ok {
		http.Error(w, "ACL token not found", http.StatusForbidden)
		return
	}
	has := func(policy string) bool {
		for _, p := range tok.Policies {
			if p == policy {
				return true
			}
		}
		for _, l := range tok.Roles {
			for _, p := range f.roles[l.ID].Policies {
				if p.Name == policy {
					return true
				}
			}
		}
		return false
	}
	switch path := r.URL.Path; {
	case path == "/v1/acl/token/self":
		_ = json.NewEncoder(w).Encode(tok)
	case strings.HasPrefix(path, "/v1/acl/policy/"):
		name := strings.TrimPrefix(path, "/v1/acl/policy/")
		rules, exists := f.policies[name]
		switch {
		case !has(name):
			http.Error(w, "Permission denied", http.StatusForbidden)
		case !exists:
			http.Error(w, "ACL policy not found", http.StatusNotFound)
		default:
			_ = json.NewEncoder(w).Encode(nomadapi.ACLPolicy{Name: name, Rules: rules})
		}
	case strings.HasPrefix(path, "/v1/acl/role/"):
		role, exists := f.roles[strings.TrimPrefix(path, "/v1/acl/role/")]
		linked := false
		for _, l := range tok.Roles {
			linked = linked || l.ID == role.ID
		}
		if !exists || !linked {
			http.Error(w, "Permission denied", http.StatusForbidden)
			return
		}
		_ = json.NewEncoder(w).Encode(role)
	default:
		http.NotFound(w, r)
	}
}

func newFakeACLNomad() *fakeACLNomad {
	return &fakeACLNomad{
		tokens: map[string]nomadapi.ACLToken{
			"mgmt":     {Type: "management"},
			"operator": {Type: "client", Policies: []string{"harvest-operator"}},
			"viewer":   {Type: "client", Policies: []string{"harvest-viewer", "gone"}},
			"jobs":     {Type: "client", Policies: []string{"submit-jobs"}},
			"by-role":  {Type: "client", Roles: []*nomadapi.ACLTokenRoleLink{{ID: "r1", Name: "ops"}}},
		},
		policies: map[string]string{
			"harvest-operator": `namespace "default" { variables { path "harvest/placer" { capabilities = ["write", "read"] } } }`,
			"harvest-viewer":   `namespace "default" { variables { path "harvest/*" { capabilities = ["read"] } } }`,
			"submit-jobs":      `namespace "default" { policy = "write" }`,
		},
		roles: map[string]nomadapi.ACLRole{"r1": {ID: "r1", Name: "ops", Policies: []*nomadapi.ACLRolePolicyLink{{Name: "harvest-operator"}}}},
	}
}

// guardedAgent is a test agent behind the guard: the placer's own token,
// and Nomad tokens checked against nomad (nil: off).
func guardedAgent(t *testing.T, nomad http.Handler, anonymousRead bool) (*httptest.Server, *Agent) {
	t.Helper()
	a, _, _ := newTestAgent(t)
	cfg := config.DefaultACL()
	cfg.Tokens = []string{adminToken}
	cfg.AnonymousRead = &anonymousRead
	off := false
	var client *nomadapi.Client
	if nomad != nil {
		srv := httptest.NewServer(nomad)
		t.Cleanup(srv.Close)
		var err error
		if client, err = nomadapi.NewClient(&nomadapi.Config{Address: srv.URL}); err != nil {
			t.Fatal(err)
		}
	} else {
		cfg.NomadTokens = &off
	}
	set, err := cfg.Decode()
	if err != nil {
		t.Fatal(err)
	}
	auth, err := newAuthorizer(set, client, hclog.NewNullLogger(), a.metrics)
	if err != nil {
		t.Fatal(err)
	}
	a.auth = auth
	srv := httptest.NewServer(a.handler())
	t.Cleanup(srv.Close)
	return srv, a
}

func callAs(t *testing.T, srv *httptest.Server, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func TestEveryWriteNeedsAToken(t *testing.T) {
	srv, a := guardedAgent(t, nil, true)
	policy := `{"reserve_cpu":0,"reserve_memory_mb":0}`
	for _, c := range []struct {
		token, method, path, body string
		want                      int
	}{
		{"", "PUT", "/v1/policy", policy, 401},
		{"not-a-token-of-the-placer", "PUT", "/v1/policy", policy, 401},
		{"", "PUT", "/v1/tenants/search/frontend", `{"reserve_cpu":0}`, 401},
		{"", "DELETE", "/v1/tenants/search/frontend", "", 401},
		{"", "DELETE", "/v1/policy", "", 401},
		{"", "POST", "/v1/classes/refresh", "", 401},
		{"", "POST", "/v1/history/samples", `{}`, 401},
		{"", "PATCH", "/v1/nothing-here", "", 401}, // unknown writes too: the guard comes first
		{"", "GET", "/v1/policy", "", 404},         // reads are open here (and there is no policy)
		{"", "GET", "/v1/health", "", 200},
	} {
		code, body := callAs(t, srv, c.token, c.method, c.path, c.body)
		if code != c.want {
			t.Errorf("%s %s with token %q: %d %s, want %d", c.method, c.path, c.token, code, body, c.want)
		}
		if c.want == 401 && !strings.Contains(errorOf(body), "token") {
			t.Errorf("%s %s: 401 without a clear error: %s", c.method, c.path, body)
		}
	}
	if _, err := declare.ReadPolicy(context.Background(), a.store); err != nil {
		t.Fatal(err)
	}
	if p, _ := declare.ReadPolicy(context.Background(), a.store); p != nil {
		t.Fatalf("a refused PUT stored a policy: %+v", p)
	}
	if code, body := callAs(t, srv, adminToken, "PUT", "/v1/policy", policy); code != 200 {
		t.Fatalf("the placer's own token: %d %s", code, body)
	}
	if p, _ := declare.ReadPolicy(context.Background(), a.store); p == nil {
		t.Fatal("the allowed PUT stored nothing")
	}
}

func TestClosedReadsNeedAToken(t *testing.T) {
	srv, _ := guardedAgent(t, nil, false)
	if code, _ := callAs(t, srv, "", "GET", "/v1/policy", ""); code != 401 {
		t.Fatalf("anonymous read with anonymous_read = false: %d", code)
	}
	if code, _ := callAs(t, srv, "", "GET", "/v1/health", ""); code != 200 {
		t.Fatalf("health must stay open: %d", code)
	}
	if code, _ := callAs(t, srv, adminToken, "GET", "/v1/policy", ""); code != 404 {
		t.Fatalf("read with the placer's token: %d", code)
	}
}

func TestNomadTokensNeedTheHarvestCapability(t *testing.T) {
	nomad := newFakeACLNomad()
	srv, _ := guardedAgent(t, nomad, false)
	body := `{"reserve_cpu":1}`
	for _, c := range []struct {
		token        string
		read, write  int
		errorSnippet string
	}{
		{"mgmt", 200, 200, ""},
		{"operator", 200, 200, ""},
		{"by-role", 200, 200, ""},
		{"viewer", 200, 403, "permission denied"},
		{"jobs", 403, 403, "permission denied"}, // namespace write is not Harvest's capability
		{"unknown-secret", 401, 401, "Nomad does not know it"},
	} {
		if code, got := callAs(t, srv, c.token, "PUT", "/v1/policy", body); code != c.write || !strings.Contains(errorOf(got), c.errorSnippet) {
			t.Errorf("PUT as %s: %d %s, want %d %q", c.token, code, got, c.write, c.errorSnippet)
		}
		if code, got := callAs(t, srv, c.token, "GET", "/v1/policy", ""); code != c.read {
			t.Errorf("GET as %s: %d %s, want %d", c.token, code, got, c.read)
		}
	}
	// Nomad unreachable: a token not yet decided cannot be checked (503),
	// a decided one is served from the cache
	nomad.down.Store(true)
	if code, got := callAs(t, srv, "operator", "PUT", "/v1/policy", body); code != 200 {
		t.Errorf("cached token while Nomad is down: %d %s", code, got)
	}
	nomad.tokens["new"] = nomadapi.ACLToken{Type: "management"}
	if code, got := callAs(t, srv, "new", "PUT", "/v1/policy", body); code != 503 || !strings.Contains(errorOf(got), "could not be checked") {
		t.Errorf("Nomad down: %d %s, want 503", code, got)
	}
}

func TestNomadTokenDecisionsExpire(t *testing.T) {
	nomad := newFakeACLNomad()
	client, _ := nomadapi.NewClient(&nomadapi.Config{Address: httptest.NewServer(nomad).URL})
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := &nomadTokens{client: client, namespace: "default", path: "harvest/placer", ttl: 30 * time.Second,
		now: func() time.Time { return clock }, cache: map[[32]byte]cachedAccess{}}
	ctx := context.Background()
	if got, err := n.resolve(ctx, "operator"); err != nil || !got.write {
		t.Fatalf("operator: %+v %v", got, err)
	}
	calls := nomad.calls.Load()
	if _, err := n.resolve(ctx, "operator"); err != nil || nomad.calls.Load() != calls {
		t.Fatalf("second resolve asked Nomad again (%d -> %d calls)", calls, nomad.calls.Load())
	}
	if _, err := n.resolve(ctx, "nobody"); !errors.Is(err, errUnknownToken) {
		t.Fatalf("unknown token: %v", err)
	}
	// the operator's policy is taken away: seen once the decision expires
	nomad.policies["harvest-operator"] = `namespace "default" { variables { path "harvest/placer" { capabilities = ["read"] } } }`
	if got, _ := n.resolve(ctx, "operator"); !got.write {
		t.Fatal("decision not cached")
	}
	clock = clock.Add(31 * time.Second)
	if got, err := n.resolve(ctx, "operator"); err != nil || got.write || !got.read {
		t.Fatalf("after the TTL: %+v %v, want read only", got, err)
	}
}
