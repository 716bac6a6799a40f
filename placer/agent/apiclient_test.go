package agent

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/harvest-platform/harvest/api"
)

// The api package's client calls the routes the agent serves (both take
// their paths from api's constants) and reads the agent's answers into
// api's wire types.
func TestAPIClientCallsTheServedRoutes(t *testing.T) {
	a, _, _ := newTestAgent(t)
	srv := httptest.NewServer(a.routes())
	defer srv.Close()
	c := api.Client{Name: "placer", Address: srv.URL}
	ctx := context.Background()
	n, err := c.IngestSamples(ctx, api.IngestRequest{Tenant: "search/frontend",
		Samples: []api.IngestSample{{Node: "client-1", Time: now.Add(-time.Hour), CPU: 40}, {Node: "client-2", Time: now.Add(-time.Hour), CPU: 20}}})
	if err != nil || n != 2 {
		t.Fatalf("ingest: %d accepted, %v", n, err)
	}
	if _, err := c.IngestSamples(ctx, api.IngestRequest{Tenant: "nofunction"}); err == nil {
		t.Fatal("a bad ingest was accepted")
	}
	// the strategies are off: their reports are not found
	for name, read := range map[string]func() error{
		"packing":   func() error { _, err := c.Packing(ctx); return err },
		"partition": func() error { _, err := c.Partition(ctx); return err },
		"greylist":  func() error { _, err := c.Greylist(ctx); return err },
		"tenant":    func() error { _, err := c.Tenant(ctx, "search", "frontend"); return err },
	} {
		if err := read(); !errors.Is(err, api.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}
