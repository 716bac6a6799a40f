package agent

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/agent/ingest"
	"github.com/harvest-platform/harvest/placer/agent/reply"
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
//	POST /v1/history/samples      ingest per-node samples of a tenant (placer/agent/ingest)
//	GET  /v1/tenants              every tenant declaration (placer/agent/declarations)
//	GET, PUT, DELETE /v1/tenants/{environment}/{function}
//	                              one tenant's declaration
//	GET, PUT, DELETE /v1/policy   the policy document (placer/agent/declarations)
//	GET  /v1/packing              packing tiers and releasable nodes (packing on)
//	GET  /v1/partition            the short-job partition and its cutoff (partition on)
//	GET  /v1/greylist             failure counts and greylisted nodes (greylist on)
//	GET  /v1/metrics              Prometheus metrics
func (a *Agent) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.PathHealth, func(w http.ResponseWriter, r *http.Request) {
		reply.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET "+api.PathClasses, func(w http.ResponseWriter, r *http.Request) {
		var t api.ClassTable
		ok, err := a.store.GetDocument(r.Context(), contract.ClassesDocument, &t)
		switch {
		case err != nil:
			reply.Error(w, http.StatusInternalServerError, err)
		case !ok:
			reply.Error(w, http.StatusNotFound, errors.New("no class table yet: POST /v1/classes/refresh"))
		default:
			// each class with the nodes that carry its label
			members, err := a.refresher.Members(r.Context())
			if err != nil {
				a.log.Warn("class table served without its nodes: cannot list Nomad's", "error", err)
				reply.JSON(w, http.StatusOK, t)
				return
			}
			reply.JSON(w, http.StatusOK, classes.WithNodes(&t, members))
		}
	})
	mux.HandleFunc("POST "+api.PathRefreshClasses, func(w http.ResponseWriter, r *http.Request) {
		t, err := a.refresher.Refresh(r.Context())
		if err != nil {
			reply.Error(w, http.StatusInternalServerError, err)
			return
		}
		a.declared.Publish(r.Context())
		reply.JSON(w, http.StatusOK, t)
	})
	mux.Handle("POST "+api.PathHistorySamples, ingest.Handler{Store: a.store, Retention: a.set.Retention, Now: a.now})
	a.declared.TenantRoutes(mux)
	a.declared.PolicyRoutes(mux)
	strategy := func(name, path string, on bool, report func() any) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			if !on {
				reply.Error(w, http.StatusNotFound, fmt.Errorf("%s is off: enable it in the placer's %s block", name, name))
				return
			}
			reply.JSON(w, http.StatusOK, report())
		})
	}
	p := a.strategies
	strategy("packing", api.PathPacking, p.packer != nil, func() any { return p.packer.Report() })
	strategy("partition", api.PathPartition, p.partition != nil, func() any { return p.partition.State() })
	strategy("greylist", api.PathGreylist, p.greylist != nil, func() any { return p.greylist.Report() })
	mux.Handle("GET "+api.PathMetrics, promhttp.HandlerFor(a.metrics.Registry, promhttp.HandlerOpts{}))
	return mux
}
