package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/harvest-platform/harvest/history"
)

// maxIngestBody bounds one ingest request (a day of samples of 100 nodes
// is well under it).
const maxIngestBody = 8 << 20

// handler serves the placer's HTTP API:
//
//	GET  /v1/health               liveness
//	GET  /v1/classes              the class table (from Consul KV)
//	POST /v1/classes/refresh      classify and label now
//	POST /v1/history/samples      ingest per-node samples of a tenant
//	GET  /v1/tenants              every tenant declaration (declarations.go)
//	GET, PUT, DELETE /v1/tenants/{environment}/{function}
//	                              one tenant's declaration
//	GET, PUT, DELETE /v1/policy   the policy document (policydoc.go)
//	GET  /v1/packing              packing tiers and releasable nodes (packing on)
//	GET  /v1/partition            the short-job partition and its cutoff (partition on)
//	GET  /v1/greylist             failure counts and greylisted nodes (greylist on)
//	GET  /v1/metrics              Prometheus metrics
func (a *Agent) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /v1/classes", func(w http.ResponseWriter, r *http.Request) {
		var t StoredTable
		ok, err := a.store.GetDocument(r.Context(), ClassesDocument, &t)
		switch {
		case err != nil:
			writeError(w, http.StatusInternalServerError, err)
		case !ok:
			writeError(w, http.StatusNotFound, errors.New("no class table yet: POST /v1/classes/refresh"))
		default:
			writeJSON(w, http.StatusOK, t)
		}
	})
	mux.HandleFunc("POST /v1/classes/refresh", func(w http.ResponseWriter, r *http.Request) {
		t, err := a.refresher.Refresh(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		a.declared.publish(r.Context())
		writeJSON(w, http.StatusOK, t)
	})
	mux.HandleFunc("POST /v1/history/samples", a.ingest)
	a.declared.tenantRoutes(mux)
	a.declared.policyRoutes(mux)
	policy := func(name string, on bool, report func() any) {
		mux.HandleFunc("GET /v1/"+name, func(w http.ResponseWriter, r *http.Request) {
			if !on {
				writeError(w, http.StatusNotFound, fmt.Errorf("%s is off: enable it in the placer's %s block", name, name))
				return
			}
			writeJSON(w, http.StatusOK, report())
		})
	}
	p := a.policies
	policy("packing", p.packer != nil, func() any { return p.packer.Report() })
	policy("partition", p.partition != nil, func() any { return p.partition.State() })
	policy("greylist", p.greylist != nil, func() any { return p.greylist.Report() })
	mux.Handle("GET /v1/metrics", promhttp.HandlerFor(a.metrics.Registry, promhttp.HandlerOpts{}))
	return mux
}

// IngestRequest is the body of POST /v1/history/samples.
type IngestRequest struct {
	Tenant  string `json:"tenant"`
	Samples []struct {
		Node string    `json:"node"`
		Time time.Time `json:"time"`
		CPU  float64   `json:"cpu_percent"`
	} `json:"samples"`
}

func (a *Agent) ingest(w http.ResponseWriter, r *http.Request) {
	var req IngestRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxIngestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("ingest body: %w", err))
		return
	}
	id, err := history.ParseTenantID(req.Tenant)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	samples := make([]history.Sample, len(req.Samples))
	for i, s := range req.Samples {
		samples[i] = history.Sample{Node: s.Node, Time: s.Time, CPU: s.CPU}
	}
	if err := a.store.AppendSamples(r.Context(), id, samples); err != nil {
		status := http.StatusBadRequest
		var corrupt *history.CorruptError
		if errors.As(err, &corrupt) {
			status = http.StatusConflict
		}
		writeError(w, status, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"accepted": len(samples)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
