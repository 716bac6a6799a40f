package api

import (
	"context"
	"net/http"
	"time"
)

// The reports of the placer's placement strategies (issue 8), each served
// while its strategy is on (ErrNotFound when off): GET /v1/packing,
// /v1/partition and /v1/greylist.

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
	err := c.Do(ctx, http.MethodGet, PathPacking, nil, &r)
	return r, err
}

// PartitionState is the short-job partition as the placer keeps it in
// Consul KV and serves it at GET /v1/partition.
type PartitionState struct {
	Cutoff  time.Duration   `json:"cutoff_ns"`
	Size    int             `json:"size"`
	Recent  []time.Duration `json:"recent_ns"`
	Nodes   []string        `json:"nodes"` // the partition's nodes, by name
	Seen    []string        `json:"seen"`  // the last job runs observed (restart-safe)
	Updated time.Time       `json:"updated"`
	Moves   int             `json:"cutoff_moves"` // times the cutoff moved
}

// Partition reads the placer's GET /v1/partition.
func (c Client) Partition(ctx context.Context) (PartitionState, error) {
	var s PartitionState
	err := c.Do(ctx, http.MethodGet, PathPartition, nil, &s)
	return s, err
}

// GreylistReport is GET /v1/greylist.
type GreylistReport struct {
	Threshold  int            `json:"threshold"`
	Reset      string         `json:"reset"`
	Failures   map[string]int `json:"failures"` // node name -> failures counted since the last reset, by kind "node"
	Greylisted []string       `json:"greylisted"`
	Updated    time.Time      `json:"updated"`
}

// Greylist reads the placer's GET /v1/greylist.
func (c Client) Greylist(ctx context.Context) (GreylistReport, error) {
	var r GreylistReport
	err := c.Do(ctx, http.MethodGet, PathGreylist, nil, &r)
	return r, err
}
