package api

import (
	"context"
	"net/http"
	"time"
)

// PackingNode is one node in the packing report.
type PackingNode struct {
	Name       string     `json:"name"`
	ID         string     `json:"id"`
	Tier       string     `json:"tier"`
	UsedMB     float64    `json:"used_mb"`    // harvested memory running there
	HarvestMB  float64    `json:"harvest_mb"` // harvestable memory
	EmptySince *time.Time `json:"empty_since,omitempty"`
	Releasable bool       `json:"releasable"`
}

// PackingReport is GET /v1/packing: the nodes in the order new harvested
// work tries them, and those empty long enough to scale in or release.
type PackingReport struct {
	Active        bool          `json:"active"`
	Reason        string        `json:"reason"`
	HighThreshold float64       `json:"high_threshold"`
	ReleaseAfter  string        `json:"release_after"`
	Updated       time.Time     `json:"updated"`
	Nodes         []PackingNode `json:"nodes"`
}

// Packing reads the placer's GET /v1/packing.
func (c Client) Packing(ctx context.Context) (PackingReport, error) {
	var r PackingReport
	err := c.Do(ctx, http.MethodGet, "/v1/packing", nil, &r)
	return r, err
}
