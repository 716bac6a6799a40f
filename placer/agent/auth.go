package agent

// Who may call the placer's API. Every state-changing request (any method
// but GET and HEAD: PUT/DELETE /v1/policy and /v1/tenants/..., POST
// /v1/classes/refresh, POST /v1/history/samples, and whatever is added
// later) needs a token; reads need one unless acl.anonymous_read is on;
// GET /v1/health never does (Consul's and Nomad's checks call it).
//
// A token is either one of the placer's own (acl.tokens, acl.tokens_file),
// compared in constant time, or a Nomad ACL token that Nomad vouches for:
// the placer asks Nomad who the token is (/v1/acl/token/self, with the
// caller's token) and reads the token's policies and roles with that same
// token, then evaluates them with Nomad's own ACL package. Nomad's policies
// cannot hold capabilities of their own invention, so Harvest's capability
// is a Nomad variables path: a token may change the placer when its
// policies grant "write" on the variables path acl.variable_path (default
// harvest/placer) in acl.namespace (default "default"), and read it when
// they grant "read" there; a management token may do both. The token never
// leaves the placer otherwise and is never logged; decisions are cached by
// the token's SHA-256 for acl.cache_ttl.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadacl "github.com/hashicorp/nomad/acl"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/placer/agent/reply"
	"github.com/harvest-platform/harvest/placer/config"
)

// access is what a token may do.
type access struct{ read, write bool }

// errUnknownToken is a token neither the placer nor Nomad knows.
var errUnknownToken = errors.New("the token is not one of the placer's and Nomad does not know it")

// tokenResolver says what a token may do; an error other than
// errUnknownToken means it could not be decided (Nomad unreachable).
type tokenResolver interface {
	resolve(ctx context.Context, token string) (access, error)
}

// authorizer guards the API.
type authorizer struct {
	static        [][32]byte    // SHA-256 of the placer's own tokens
	nomad         tokenResolver // nil: Nomad tokens are not accepted
	anonymousRead bool
	log           hclog.Logger
	metrics       *Metrics
}

// newAuthorizer builds the guard the acl block describes; nomad is the
// placer's Nomad client, whose address and TLS settings the token checks
// use (never its token).
func newAuthorizer(cfg config.ACLSettings, nomad *nomadapi.Client, log hclog.Logger, m *Metrics) (*authorizer, error) {
	a := &authorizer{anonymousRead: cfg.AnonymousRead, log: log, metrics: m}
	for _, t := range cfg.Tokens {
		a.static = append(a.static, sha256.Sum256([]byte(t)))
	}
	if cfg.NomadTokens {
		a.nomad = &nomadTokens{client: nomad, namespace: cfg.Namespace, path: cfg.VariablePath, ttl: cfg.CacheTTL,
			now: time.Now, cache: map[[32]byte]cachedAccess{}}
	}
	if len(a.static) == 0 && a.nomad == nil {
		log.Warn("acl: no tokens and nomad_tokens off: every state-changing request will be refused")
	}
	return a, nil
}

// wrap puts the guard in front of h.
func (a *authorizer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		if read && (r.URL.Path == api.PathHealth || a.anonymousRead) {
			h.ServeHTTP(w, r)
			return
		}
		need := "write"
		if read {
			need = "read"
		}
		token := requestToken(r)
		if token == "" {
			a.refuse(w, r, http.StatusUnauthorized, fmt.Errorf("%s %s needs a token with %s access: send it as \"Authorization: Bearer <token>\" or X-Nomad-Token "+
				"(one of the placer's acl tokens, or a Nomad ACL token whose policies grant %s on the Harvest capability)", r.Method, r.URL.Path, need, need))
			return
		}
		got, err := a.resolve(r.Context(), token)
		switch {
		case errors.Is(err, errUnknownToken):
			a.refuse(w, r, http.StatusUnauthorized, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, err))
			return
		case err != nil:
			a.refuse(w, r, http.StatusServiceUnavailable, fmt.Errorf("%s %s: the token could not be checked: %w", r.Method, r.URL.Path, err))
			return
		case read && !got.read, !read && !got.write:
			a.refuse(w, r, http.StatusForbidden, fmt.Errorf("%s %s: permission denied: the token does not grant %s access to the placer", r.Method, r.URL.Path, need))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (a *authorizer) refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	a.log.Warn("request refused", "method", r.Method, "path", r.URL.Path, "status", status, "remote", r.RemoteAddr, "error", err)
	if a.metrics != nil {
		a.metrics.AuthRefusals.WithLabelValues(fmt.Sprint(status)).Inc()
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="harvest-placer"`)
	}
	reply.Error(w, status, err)
}

// resolve says what token may do: the placer's own tokens may do
// everything; otherwise Nomad decides.
func (a *authorizer) resolve(ctx context.Context, token string) (access, error) {
	sum := sha256.Sum256([]byte(token))
	for _, s := range a.static {
		if subtle.ConstantTimeCompare(sum[:], s[:]) == 1 {
			return access{read: true, write: true}, nil
		}
	}
	if a.nomad == nil {
		return access{}, errUnknownToken
	}
	return a.nomad.resolve(ctx, token)
}

// requestToken is the caller's token: "Authorization: Bearer", else
// X-Nomad-Token (what Nomad's own clients send).
func requestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	return strings.TrimSpace(r.Header.Get("X-Nomad-Token"))
}

// nomadTokens asks Nomad what a Nomad ACL token may do.
type nomadTokens struct {
	client          *nomadapi.Client
	namespace, path string
	ttl             time.Duration
	now             func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]cachedAccess
}

type cachedAccess struct {
	access  access
	unknown bool
	until   time.Time
}

// maxCachedTokens bounds the cache: when full it is emptied (tokens are
// asked again), so a flood of made-up tokens cannot grow it.
const maxCachedTokens = 4096

func (n *nomadTokens) resolve(ctx context.Context, token string) (access, error) {
	key := sha256.Sum256([]byte(token))
	n.mu.Lock()
	c, ok := n.cache[key]
	n.mu.Unlock()
	if ok && n.now().Before(c.until) {
		if c.unknown {
			return access{}, errUnknownToken
		}
		return c.access, nil
	}
	got, err := n.ask(ctx, token)
	if err != nil && !errors.Is(err, errUnknownToken) {
		return access{}, err // not cached: Nomad may be back at the next call
	}
	n.mu.Lock()
	if len(n.cache) >= maxCachedTokens {
		clear(n.cache)
	}
	n.cache[key] = cachedAccess{access: got, unknown: err != nil, until: n.now().Add(n.ttl)}
	n.mu.Unlock()
	return got, err
}

// ask resolves the token's policies (its own and its roles') with the
// token itself and evaluates them as Nomad does.
func (n *nomadTokens) ask(ctx context.Context, token string) (access, error) {
	q := (&nomadapi.QueryOptions{AuthToken: token}).WithContext(ctx)
	self, _, err := n.client.ACLTokens().Self(q)
	if err != nil {
		return access{}, nomadTokenError(err)
	}
	if self.Type == "management" {
		return access{read: true, write: true}, nil
	}
	if self.ExpirationTime != nil && !self.ExpirationTime.After(n.now()) {
		return access{}, errUnknownToken
	}
	names := append([]string{}, self.Policies...)
	for _, link := range self.Roles {
		role, _, err := n.client.ACLRoles().Get(link.ID, q)
		if err != nil {
			return access{}, fmt.Errorf("reading the token's role %q from Nomad: %w", link.Name, err)
		}
		for _, p := range role.Policies {
			names = append(names, p.Name)
		}
	}
	var policies []*nomadacl.Policy
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		p, _, err := n.client.ACLPolicies().Info(name, q)
		if err != nil {
			var coded nomadapi.UnexpectedResponseError
			if errors.As(err, &coded) && coded.StatusCode() == http.StatusNotFound {
				continue // a policy deleted since the token was made grants nothing
			}
			return access{}, fmt.Errorf("reading the token's policy %q from Nomad: %w", name, err)
		}
		parsed, err := nomadacl.Parse(p.Rules, nomadacl.PolicyParseLenient)
		if err != nil {
			return access{}, fmt.Errorf("Nomad policy %q: %w", name, err)
		}
		policies = append(policies, parsed)
	}
	compiled, err := nomadacl.NewACL(false, policies)
	if err != nil {
		return access{}, fmt.Errorf("compiling the token's Nomad policies: %w", err)
	}
	return access{
		read:  compiled.AllowVariableOperation(n.namespace, n.path, nomadacl.VariablesCapabilityRead, nil),
		write: compiled.AllowVariableOperation(n.namespace, n.path, nomadacl.VariablesCapabilityWrite, nil),
	}, nil
}

// nomadTokenError tells a token Nomad does not know (403 "ACL token not
// found"; 400 when Nomad's ACLs are off, which vouches for no token) from
// Nomad being unreachable.
func nomadTokenError(err error) error {
	var coded nomadapi.UnexpectedResponseError
	if errors.As(err, &coded) {
		switch {
		case coded.StatusCode() == http.StatusForbidden, coded.StatusCode() == http.StatusNotFound:
			return errUnknownToken
		case coded.StatusCode() == http.StatusBadRequest && strings.Contains(strings.ToLower(coded.Body()), "acl support disabled"):
			return fmt.Errorf("%w (Nomad's ACLs are disabled: only the placer's own acl tokens are accepted)", errUnknownToken)
		}
	}
	return fmt.Errorf("asking Nomad about the token: %w", err)
}
