package api

import (
	"context"
	"net/http"
	"time"
)

// IngestRequest is the body of the placer's POST /v1/history/samples:
// per-node CPU samples of one tenant ("environment/function"), folded into
// its history.
type IngestRequest struct {
	Tenant  string         `json:"tenant"`
	Samples []IngestSample `json:"samples"`
}

// IngestSample is one node's CPU utilisation (percent) at a time.
type IngestSample struct {
	Node string    `json:"node"`
	Time time.Time `json:"time"`
	CPU  float64   `json:"cpu_percent"`
}

// IngestAnswer is the placer's answer to an ingest: how many samples it
// took (all of them: a request is taken whole or refused).
type IngestAnswer struct {
	Accepted int `json:"accepted"`
}

// IngestSamples sends a tenant's samples (POST /v1/history/samples) and
// returns how many the placer accepted.
func (c Client) IngestSamples(ctx context.Context, req IngestRequest) (int, error) {
	var a IngestAnswer
	err := c.Do(ctx, http.MethodPost, PathHistorySamples, req, &a)
	return a.Accepted, err
}
