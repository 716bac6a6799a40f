// Package api is the one client of Harvest's own HTTP APIs (the placer's
// API and the blob front's admin API), used by harvestctl and the
// Terraform provider, the way Nomad's api/ package serves every caller of
// Nomad's: JSON in and out, the caller's token as a bearer token, TLS from
// connect.ClientTLS, a 404 as ErrNotFound and the API's own message in
// every other error.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/internal/connect"
)

// ErrNotFound is a 404 answer: the object is not there.
var ErrNotFound = errors.New("not found")

// maxAnswer bounds an answer's size.
const maxAnswer = 64 << 20

// Client calls one Harvest daemon's HTTP API.
type Client struct {
	// Name names the daemon in errors ("placer", "harvest-blob").
	Name string
	// Address is the API's base URL; without a scheme, http:// is meant.
	Address string
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token string
	// TLS is what the client trusts and presents over https://.
	TLS connect.ClientTLS
	// Timeout bounds each call (0: 30 s).
	Timeout time.Duration
}

// Placer is a client of the placer's API at address, with its token and
// TLS from the environment (HARVEST_PLACER_TOKEN, else NOMAD_TOKEN;
// HARVEST_CACERT, HARVEST_CLIENT_CERT, HARVEST_CLIENT_KEY), as harvestctl
// calls it.
func Placer(address string) Client {
	return Client{Name: "placer", Address: address, Token: connect.PlacerToken(), TLS: connect.ClientTLSFromEnv()}
}

// Blob is a client of the blob front's admin API at address, with
// HARVEST_BLOB_ADMIN_TOKEN and the TLS environment.
func Blob(address string) Client {
	return Client{Name: "harvest-blob", Address: address, Token: os.Getenv(connect.EnvBlobAdminToken), TLS: connect.ClientTLSFromEnv()}
}

// WithTimeout is the client with another per-call timeout.
func (c Client) WithTimeout(d time.Duration) Client {
	c.Timeout = d
	return c
}

// Do sends body (when not nil) as JSON to path and decodes a 2xx answer
// into out (when not nil).
func (c Client) Do(ctx context.Context, method, path string, body, out any) error {
	base := c.Address
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	url := strings.TrimRight(base, "/") + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc, err := c.TLS.HTTPClient(0)
	if err != nil {
		return fmt.Errorf("%s: TLS settings: %w", c.who(), err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s %s: %w", c.who(), method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s: %s %s: %w", c.who(), method, url, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: %s %s: %w: %s", c.who(), method, url, ErrNotFound, apiError(raw))
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("%s answered %s to %s %s: %s", c.who(), resp.Status, method, path, apiError(raw))
	case out == nil || resp.StatusCode == http.StatusNoContent:
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: %s %s: decoding the answer: %w", c.who(), method, url, err)
	}
	return nil
}

func (c Client) who() string {
	if c.Name == "" {
		return c.Address
	}
	return c.Name
}

// apiError is the {"error": "..."} message of a Harvest API, or the body.
func apiError(raw []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(raw))
}
