package blobd

// The front's own listeners and who may use its admin API. S3 clients
// authenticate with SigV4 (versitygw checks every signature); with a tls
// block the S3 listener speaks HTTPS only. The admin API's state-changing
// endpoints (POST /v1/scrub, /v1/gc, /v1/safe-mode/confirm) need one of
// admin_tokens ("Authorization: Bearer <token>"); its reads (/v1/status,
// /v1/metrics) need one too unless admin_anonymous_read; every other read,
// /v1/objects (which names objects and where they are) included, always
// does; /v1/health never does. With admin_tls it speaks HTTPS, and wants client certificates when
// admin_tls names a client_ca_file.

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/setting"
)

// minAdminTokenLength keeps guessable tokens out.
const minAdminTokenLength = 16

// checkSecurity checks the TLS blocks and the admin tokens when the file
// loads.
func (c *Config) checkSecurity(path string) error {
	if c.TLS != nil {
		if err := c.TLS.Validate("tls"); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if c.TLS.ClientCAFile != "" {
			return fmt.Errorf("%s: tls.client_ca_file: S3 clients authenticate by signature, not certificate", path)
		}
	}
	if c.AdminTLS != nil {
		if err := c.AdminTLS.Validate("admin_tls"); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := c.Consul.Validate("consul"); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	_, err := c.adminTokens()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// adminTokens are admin_tokens and admin_tokens_file's lines.
func (c *Config) adminTokens() ([]string, error) {
	return setting.Tokens(c.AdminTokens, c.AdminTokensFile, "admin_tokens_file", "admin token", minAdminTokenLength)
}

// adminGuard puts the admin API behind its tokens.
func (c *Config) adminGuard(h http.Handler, log hclog.Logger) (http.Handler, error) {
	tokens, err := c.adminTokens()
	if err != nil {
		return nil, err
	}
	sums := make([][32]byte, len(tokens))
	for i, t := range tokens {
		sums[i] = sha256.Sum256([]byte(t))
	}
	anonymousRead := c.AdminAnonymousRead == nil || *c.AdminAnonymousRead
	if len(sums) == 0 {
		log.Warn("no admin_tokens: the admin API's POST endpoints (scrub, gc, safe-mode confirm) refuse every request")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		if read && (r.URL.Path == "/v1/health" || anonymousRead && (r.URL.Path == "/v1/status" || r.URL.Path == "/v1/metrics")) {
			h.ServeHTTP(w, r)
			return
		}
		token := ""
		if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(tok)
		}
		status, msg := http.StatusUnauthorized, fmt.Sprintf("%s %s needs one of harvest-blob's admin_tokens: send \"Authorization: Bearer <token>\"", r.Method, r.URL.Path)
		if token != "" {
			sum := sha256.Sum256([]byte(token))
			for _, s := range sums {
				if subtle.ConstantTimeCompare(sum[:], s[:]) == 1 {
					h.ServeHTTP(w, r)
					return
				}
			}
			msg = fmt.Sprintf("%s %s: the token is not one of harvest-blob's admin_tokens", r.Method, r.URL.Path)
		}
		log.Warn("admin request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="harvest-blob"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}), nil
}
