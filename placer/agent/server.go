package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// handler is the API behind its guard (auth.go): every state-changing
// request needs a token, reads as acl.anonymous_read says.
func (a *Agent) handler() http.Handler { return a.auth.wrap(a.routes()) }

// routes serves the placer's HTTP API:
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
func (a *Agent) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.PathHealth, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET "+api.PathClasses, func(w http.ResponseWriter, r *http.Request) {
		var t api.ClassTable
		ok, err := a.store.GetDocument(r.Context(), contract.ClassesDocument, &t)
		switch {
		case err != nil:
			writeError(w, http.StatusInternalServerError, err)
		case !ok:
			writeError(w, http.StatusNotFound, errors.New("no class table yet: POST /v1/classes/refresh"))
		default:
			// each class with the nodes that carry its label
			members, err := a.refresher.Members(r.Context())
			if err != nil {
				a.log.Warn("class table served without its nodes: cannot list Nomad's", "error", err)
				writeJSON(w, http.StatusOK, t)
				return
			}
			writeJSON(w, http.StatusOK, classes.WithNodes(&t, members))
		}
	})
	mux.HandleFunc("POST "+api.PathRefreshClasses, func(w http.ResponseWriter, r *http.Request) {
		t, err := a.refresher.Refresh(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		a.declared.publish(r.Context())
		writeJSON(w, http.StatusOK, t)
	})
	mux.HandleFunc("POST "+api.PathHistorySamples, a.ingest)
	a.declared.tenantRoutes(mux)
	a.declared.policyRoutes(mux)
	strategy := func(name, path string, on bool, report func() any) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			if !on {
				writeError(w, http.StatusNotFound, fmt.Errorf("%s is off: enable it in the placer's %s block", name, name))
				return
			}
			writeJSON(w, http.StatusOK, report())
		})
	}
	p := a.strategies
	strategy("packing", api.PathPacking, p.packer != nil, func() any { return p.packer.Report() })
	strategy("partition", api.PathPartition, p.partition != nil, func() any { return p.partition.State() })
	strategy("greylist", api.PathGreylist, p.greylist != nil, func() any { return p.greylist.Report() })
	mux.Handle("GET "+api.PathMetrics, promhttp.HandlerFor(a.metrics.Registry, promhttp.HandlerOpts{}))
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}
