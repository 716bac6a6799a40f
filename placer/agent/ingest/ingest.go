// Package ingest owns the placer's POST /v1/history/samples
// (api.IngestRequest): per-node CPU samples of one tenant, folded into its
// history. What one request may carry is bounded (body size, samples,
// distinct nodes and days, how old and how new a sample may be, the shape
// of node names), and so is what a tenant may grow to (nodes per tenant,
// tenants in all), so that nobody can bloat Consul through it.
package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/agent/reply"
)

// Ingest bounds.
const (
	maxIngestBody    = 4 << 20 // bytes of one request
	maxIngestSamples = 50000   // samples in one request (a week of 2-minute slots of 10 nodes)
	maxIngestNodes   = 256     // distinct nodes in one request
	maxIngestDays    = 8       // distinct UTC days in one request
	maxTenantNodes   = 4096    // nodes one tenant may list
	maxTenants       = 100000  // tenants the history may hold
	// ingestFuture is how far ahead of the placer's clock a sample may be
	// (clock skew between the sender and the placer).
	ingestFuture = 5 * time.Minute
)

// nodeName is what a node name may be: a host name or a Nomad node name.
var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// parsedIngest is a checked ingest request.
type parsedIngest struct {
	tenant  history.TenantID
	samples []history.Sample
	nodes   []string // distinct, sorted
}

// parseIngest decodes and checks a body: unknown fields, trailing data, a
// bad tenant, too many samples, nodes or days, a sample outside [now -
// retention, now + ingestFuture], a bad node name or a value outside 0-100
// refuse the whole request.
func parseIngest(body []byte, now time.Time, retention time.Duration) (parsedIngest, error) {
	var req api.IngestRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return parsedIngest{}, fmt.Errorf("ingest body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return parsedIngest{}, errors.New("ingest body: data after the JSON object")
	}
	id, err := history.ParseTenantID(req.Tenant)
	if err != nil {
		return parsedIngest{}, err
	}
	if len(req.Samples) == 0 {
		return parsedIngest{}, errors.New("ingest body: no samples")
	}
	if len(req.Samples) > maxIngestSamples {
		return parsedIngest{}, fmt.Errorf("ingest body: %d samples, at most %d per request", len(req.Samples), maxIngestSamples)
	}
	oldest, newest := now.Add(-retention), now.Add(ingestFuture)
	out := parsedIngest{tenant: id, samples: make([]history.Sample, len(req.Samples))}
	nodes, days := map[string]bool{}, map[history.Date]bool{}
	for i, s := range req.Samples {
		switch {
		case !nodeName.MatchString(s.Node):
			return parsedIngest{}, fmt.Errorf("sample %d: node %q must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", i, truncate(s.Node, 140))
		case s.Time.Before(oldest) || s.Time.After(newest):
			return parsedIngest{}, fmt.Errorf("sample %d of %s: time %s is outside the history's window [%s, %s]", i, s.Node,
				s.Time.UTC().Format(time.RFC3339), oldest.UTC().Format(time.RFC3339), newest.UTC().Format(time.RFC3339))
		case !(s.CPU >= 0 && s.CPU <= 100): // NaN fails both
			return parsedIngest{}, fmt.Errorf("sample %d of %s: cpu_percent %v is outside 0-100", i, s.Node, s.CPU)
		}
		nodes[s.Node], days[history.DateOf(s.Time)] = true, true
		out.samples[i] = history.Sample{Node: s.Node, Time: s.Time, CPU: s.CPU}
	}
	if len(nodes) > maxIngestNodes {
		return parsedIngest{}, fmt.Errorf("ingest body: %d distinct nodes, at most %d per request", len(nodes), maxIngestNodes)
	}
	if len(days) > maxIngestDays {
		return parsedIngest{}, fmt.Errorf("ingest body: samples on %d days, at most %d per request", len(days), maxIngestDays)
	}
	for n := range nodes {
		out.nodes = append(out.nodes, n)
	}
	slices.Sort(out.nodes)
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// checkGrowth refuses a request that would make its tenant list more than
// maxTenantNodes nodes, or add a tenant beyond maxTenants.
func checkGrowth(known []history.TenantInfo, in parsedIngest) error {
	for _, t := range known {
		if t.ID() != in.tenant {
			continue
		}
		have := map[string]bool{}
		for _, n := range t.Nodes {
			have[n] = true
		}
		added := 0
		for _, n := range in.nodes {
			if !have[n] {
				added++
			}
		}
		if len(have)+added > maxTenantNodes {
			return fmt.Errorf("tenant %s would list %d nodes, at most %d", in.tenant, len(have)+added, maxTenantNodes)
		}
		return nil
	}
	if len(known) >= maxTenants {
		return fmt.Errorf("the history holds %d tenants already, at most %d: tenant %s is not added", len(known), maxTenants, in.tenant)
	}
	return nil
}

// Handler serves POST /v1/history/samples into Store: samples must lie
// within Retention before Now (and at most ingestFuture after it).
type Handler struct {
	Store     *history.Store
	Retention time.Duration
	Now       func() time.Time
}

// ServeHTTP checks a request whole and appends its samples, or refuses it.
func (h Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxIngestBody))
	if err != nil {
		reply.Error(w, reply.BodyStatus(err), fmt.Errorf("ingest body: %w", err))
		return
	}
	in, err := parseIngest(body, h.Now(), h.Retention)
	if err != nil {
		reply.Error(w, http.StatusBadRequest, err)
		return
	}
	known, err := h.Store.Tenants(r.Context())
	if err != nil {
		reply.Error(w, http.StatusInternalServerError, err)
		return
	}
	if err := checkGrowth(known, in); err != nil {
		reply.Error(w, http.StatusBadRequest, err)
		return
	}
	if err := h.Store.AppendSamples(r.Context(), in.tenant, in.samples); err != nil {
		status := http.StatusBadRequest
		var corrupt *history.CorruptError
		if errors.As(err, &corrupt) {
			status = http.StatusConflict
		}
		reply.Error(w, status, err)
		return
	}
	reply.JSON(w, http.StatusOK, api.IngestAnswer{Accepted: len(in.samples)})
}
