package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/internal/connect"
)

// callAPI makes one request to a Harvest daemon's HTTP API (who names it in
// errors: "placer", "harvest-blob") and decodes its JSON answer into out.
// It sends the daemon's token (HARVEST_PLACER_TOKEN, else NOMAD_TOKEN, for
// the placer; HARVEST_BLOB_ADMIN_TOKEN for harvest-blob's admin API) and
// trusts and presents what HARVEST_CACERT, HARVEST_CLIENT_CERT and
// HARVEST_CLIENT_KEY name over HTTPS.
func callAPI(ctx context.Context, who, method, addr, path string, timeout time.Duration, out any) error {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(addr, "/")+path, nil)
	if err != nil {
		return err
	}
	token := connect.PlacerToken()
	if who == "harvest-blob" {
		token = os.Getenv(connect.EnvBlobAdminToken)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc, err := connect.ClientTLSFromEnv().HTTPClient(0)
	if err != nil {
		return fmt.Errorf("%s: TLS settings (HARVEST_CACERT, HARVEST_CLIENT_CERT, HARVEST_CLIENT_KEY): %w", who, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", who, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s answer: %w", who, err)
	}
	return nil
}
