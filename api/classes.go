package api

import (
	"context"
	"net/http"
	"time"
)

// The placer's class table: GET /v1/classes, POST /v1/classes/refresh,
// and the document contract.ClassesDocument in Harvest's Consul KV prefix
// (the placer writes it; harvestctl reads it without the placer).

// ClassTable is one classification: the classes, the tenants left out and
// how many Nomad nodes carry each label. The stored table must stay under
// Consul's 512 KiB value limit for datacenters of thousands of tenants, so
// it keeps no node lists: the API adds each class's nodes when it serves
// the table.
type ClassTable struct {
	Generated    time.Time      `json:"generated"`
	Classes      []Class        `json:"classes"`
	Unclassified []Unclassified `json:"unclassified"`
	// NodeCounts is how many Nomad nodes carry each class label.
	NodeCounts map[string]int `json:"node_counts"`
}

// Class is one class of primary tenants (placer/classify) and how likely
// a harvested task is to survive on it (placer/survival).
type Class struct {
	Name    string   `json:"name"`    // e.g. "periodic-2"
	Pattern string   `json:"pattern"` // periodic, constant or unpredictable
	Average float64  `json:"average"` // percent, node-weighted mean of members' means
	Peak    float64  `json:"peak"`    // percent, node-weighted mean of members' peaks
	Current float64  `json:"current"` // percent, node-weighted mean of members' latest hour
	Tenants []string `json:"tenants"`
	Nodes   []string `json:"nodes"` // Nomad nodes carrying the label: served, never stored
	// Survival is, for each length of survival.DefaultLengths, the
	// server-weighted share of the tasks of about that length that ran to
	// their end when the class's history window was replayed on a full
	// server of the class's typical size with youngest-first kills, the
	// grid's lengths started in equal numbers. A server that is not full
	// does better: it is a lower bound when harvesting is not in demand.
	Survival []SurvivalPoint `json:"survival,omitempty"`
	// SurvivalByJobType is one figure per job type, read off Survival at
	// the length a job of the type runs at most (short: the short
	// threshold, medium: the long threshold) or, for long jobs, at twice
	// the long threshold.
	SurvivalByJobType map[string]JobTypeSurvival `json:"survival_by_job_type,omitempty"`
	// SurvivalServer is the server the history was replayed on.
	SurvivalServer *SurvivalServer `json:"survival_server,omitempty"`
	// SurvivalUnavailable says why the class has no survival figures.
	SurvivalUnavailable string `json:"survival_unavailable,omitempty"`
}

// SurvivalPoint is the share of replayed tasks of Length that survived;
// Probability is nil (JSON null) when no task decided it.
type SurvivalPoint struct {
	Length      time.Duration `json:"length"`
	Probability *float64      `json:"probability"`
	Tasks       int           `json:"tasks"` // replayed tasks that decided it
}

// JobTypeSurvival is the survival of a task of Length (nil: unknown).
type JobTypeSurvival struct {
	Length      time.Duration `json:"length"`
	Probability *float64      `json:"probability"`
}

// SurvivalServer is a class's typical server as the harvest driver on its
// median node (by cores, then reserve, then margin) reports it.
type SurvivalServer struct {
	Cores float64 `json:"cores"`
	// Reserve is the driver's effective CPU reserve: a task is killed when
	// the primary eats into it.
	Reserve float64 `json:"reserve_cores"`
	// Margin is the driver's admission margin: a task starts only with the
	// reserve and the margin free, so the margin shields the tasks of a
	// full server from a rise of its size.
	Margin float64 `json:"admit_margin_cores"`
	Nodes  int     `json:"nodes"` // the class's nodes that report the driver's size
}

// Unclassified is a tenant the classifier left out, and why.
type Unclassified struct {
	Tenant string `json:"tenant"`
	Reason string `json:"unclassified_reason,omitempty"`
}

// Classes reads the placer's GET /v1/classes.
func (c Client) Classes(ctx context.Context) (ClassTable, error) {
	var t ClassTable
	err := c.Do(ctx, http.MethodGet, PathClasses, nil, &t)
	return t, err
}

// RefreshClasses asks the placer to classify again now and returns the
// new table (POST /v1/classes/refresh).
func (c Client) RefreshClasses(ctx context.Context) (ClassTable, error) {
	var t ClassTable
	err := c.Do(ctx, http.MethodPost, PathRefreshClasses, nil, &t)
	return t, err
}
