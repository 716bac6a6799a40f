package declarations

// The placer's policy document (GET, PUT, DELETE /v1/policy): one JSON
// document in Consul KV, at PolicyDocumentName, that overrides at run time
// the classifier thresholds of the classify block (each refresh reads it)
// and the proxy's Algorithm 1 weights (swapped live by declsync.go), and
// sets the reserve defaults published on harvested nodes whose tenant
// declares none. Replicas and diversity are only stored: the blob front
// reads them (storage/front/declared.go). This file owns the document's
// routes and what it changes; its shape, checks and reader are
// history/declare's (shared with the driver and the blob front).

import (
	"context"
	"errors"
	"maps"
	"net/http"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/placer/agent/reply"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// PolicyDocumentName is where the policy document lives under Harvest's KV
// prefix (apart from the history's keys).
const PolicyDocumentName = declare.PolicyName

// PolicyDocument is the body of PUT /v1/policy and what GET returns. Every
// field is optional; a field left out keeps the configuration file's value
// (or, for reserves, publishes nothing). It is stored as given: no
// defaults are filled in. Its shape and checks live in history/declare,
// which the driver reads it with too.
type PolicyDocument = declare.Policy

// parsePolicyDocument reads and checks a PUT /v1/policy body.
func parsePolicyDocument(data []byte) (PolicyDocument, error) { return declare.ParsePolicy(data) }

func policyThresholds(p PolicyDocument) config.ClassifyThresholds {
	return config.ClassifyThresholds{PeriodicStrength: p.PeriodicStrength, ConstantSD: p.ConstantSD,
		ClassSpread: p.ClassSpread, MaxClasses: p.MaxClasses}
}

// weightsOver returns base with the document's weights over it, as a new
// set: base, which live readers may hold, is never modified.
func weightsOver(p *PolicyDocument, base selectclass.Weights) selectclass.Weights {
	out := selectclass.Weights{}
	for typ, byPattern := range base {
		out[typ] = maps.Clone(byPattern)
	}
	if p == nil {
		return out
	}
	for typ, byPattern := range p.Weights {
		if out[typ] == nil {
			out[typ] = map[string]float64{}
		}
		maps.Copy(out[typ], byPattern)
	}
	return out
}

// policy reads the stored document (nil when there is none); a value that
// does not decode or check is a *history.CorruptError naming its key.
func (d *Declared) policy(ctx context.Context) (*PolicyDocument, error) {
	return declare.ReadPolicy(ctx, d.store)
}

// Thresholds are the classifier settings of one refresh: base (the
// configuration file's) with the stored document's over them.
func (d *Declared) Thresholds(ctx context.Context, base classify.Config) (classify.Config, error) {
	p, err := d.policy(ctx)
	if err != nil || p == nil {
		return base, err
	}
	err = policyThresholds(*p).Apply(&base, "")
	return base, err
}

// PolicyRoutes serves GET, PUT, DELETE /v1/policy on mux.
func (d *Declared) PolicyRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+api.PathPolicy, func(w http.ResponseWriter, r *http.Request) {
		p, err := d.policy(r.Context())
		switch {
		case err != nil:
			reply.Error(w, http.StatusInternalServerError, err)
		case p == nil:
			reply.Error(w, http.StatusNotFound, errors.New("no policy document: PUT /v1/policy"))
		default:
			reply.JSON(w, http.StatusOK, p)
		}
	})
	mux.HandleFunc("PUT "+api.PathPolicy, func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(w, r)
		var p PolicyDocument
		if err == nil {
			p, err = parsePolicyDocument(body)
		}
		if err != nil {
			reply.Error(w, http.StatusBadRequest, err)
			return
		}
		if err := d.store.PutDocument(r.Context(), PolicyDocumentName, p); err != nil {
			reply.Error(w, http.StatusInternalServerError, err)
			return
		}
		d.Publish(r.Context())
		reply.JSON(w, http.StatusOK, p)
	})
	mux.HandleFunc("DELETE "+api.PathPolicy, func(w http.ResponseWriter, r *http.Request) {
		if err := d.store.DeleteDocument(r.Context(), PolicyDocumentName); err != nil {
			reply.Error(w, http.StatusInternalServerError, err)
			return
		}
		d.Publish(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
}
