package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/internal/setting"
)

// ACLConfig is the acl block: who may call the placer's API (placer/agent's
// auth.go enforces it).
//
//	acl {
//	  tokens         = []                # the placer's own tokens: read and write everything
//	  tokens_file    = ""                # more, one per line ('#' starts a comment)
//	  nomad_tokens   = true              # also accept Nomad ACL tokens Nomad vouches for
//	  namespace      = "default"         # where the Harvest capability lives in Nomad ...
//	  variable_path  = "harvest/placer"  # ... as a variables path: "write" to change, "read" to read
//	  anonymous_read = true              # GETs without a token (false: they need "read")
//	  cache_ttl      = "30s"             # how long Nomad's answer about a token is kept
//	}
type ACLConfig struct {
	Tokens        []string `hcl:"tokens,optional"`
	TokensFile    string   `hcl:"tokens_file,optional"`
	NomadTokens   *bool    `hcl:"nomad_tokens,optional"`
	Namespace     string   `hcl:"namespace,optional"`
	VariablePath  string   `hcl:"variable_path,optional"`
	AnonymousRead *bool    `hcl:"anonymous_read,optional"`
	CacheTTL      string   `hcl:"cache_ttl,optional"`
}

// minTokenLength keeps guessable tokens out of the placer's config.
const minTokenLength = 16

// ACLSettings are the acl block decoded: tokens_file read, cache_ttl
// parsed, the defaults applied.
type ACLSettings struct {
	Tokens        []string // the placer's own: the tokens list and tokens_file's lines
	NomadTokens   bool
	Namespace     string
	VariablePath  string
	AnonymousRead bool
	CacheTTL      time.Duration
}

// DefaultACL is the acl block when the file has none.
func DefaultACL() ACLConfig {
	on, open := true, true
	return ACLConfig{NomadTokens: &on, Namespace: "default", VariablePath: "harvest/placer", AnonymousRead: &open, CacheTTL: "30s"}
}

// merge lays src's acl block over c.
func (c ACLConfig) merge(src ACLConfig) ACLConfig {
	dst := &c
	if src.Tokens != nil {
		dst.Tokens = src.Tokens
	}
	for _, p := range []struct{ d, s *string }{{&dst.TokensFile, &src.TokensFile}, {&dst.Namespace, &src.Namespace},
		{&dst.VariablePath, &src.VariablePath}, {&dst.CacheTTL, &src.CacheTTL}} {
		if *p.s != "" {
			*p.d = *p.s
		}
	}
	if src.NomadTokens != nil {
		dst.NomadTokens = src.NomadTokens
	}
	if src.AnonymousRead != nil {
		dst.AnonymousRead = src.AnonymousRead
	}
	return c
}

// Decode checks the block, reading tokens_file.
func (c ACLConfig) Decode() (ACLSettings, error) {
	if c.NomadTokens == nil || c.AnonymousRead == nil {
		return ACLSettings{}, fmt.Errorf("acl: internal: defaults not applied")
	}
	cacheTTL, err := time.ParseDuration(c.CacheTTL)
	if err != nil || cacheTTL < 0 {
		return ACLSettings{}, fmt.Errorf("acl.cache_ttl %q: want a duration such as \"30s\"", c.CacheTTL)
	}
	if *c.NomadTokens && (c.Namespace == "" || c.VariablePath == "" || strings.HasPrefix(c.VariablePath, "/")) {
		return ACLSettings{}, fmt.Errorf("acl: namespace and variable_path (no leading '/') are needed with nomad_tokens")
	}
	tokens, err := c.tokens()
	if err != nil {
		return ACLSettings{}, err
	}
	return ACLSettings{Tokens: tokens, NomadTokens: *c.NomadTokens, Namespace: c.Namespace, VariablePath: c.VariablePath,
		AnonymousRead: *c.AnonymousRead, CacheTTL: cacheTTL}, nil
}

// tokens are the placer's own tokens: the tokens list and tokens_file's
// lines.
func (c ACLConfig) tokens() ([]string, error) {
	return setting.Tokens(c.Tokens, c.TokensFile, "acl.tokens_file", "acl: token", minTokenLength)
}
