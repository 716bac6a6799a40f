package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// maxJobBody bounds a job register/plan/validate body.
const maxJobBody = 16 << 20

// jobWrite matches the endpoints whose body is a job to rewrite: register
// (/v1/jobs, /v1/job/<id>), plan (/v1/job/<id>/plan) and validate.
var jobWrite = regexp.MustCompile(`^/v1/(jobs|job/[^/]+|job/[^/]+/plan|validate/job)$`)

// Proxy forwards to Nomad, rewriting harvested jobs on the way.
type Proxy struct {
	upstream *httputil.ReverseProxy
	rewriter *Rewriter
	log      hclog.Logger
	metrics  *Metrics
}

// New returns a proxy to the Nomad API at nomad.
func New(nomad *url.URL, rw *Rewriter, log hclog.Logger, m *Metrics) *Proxy {
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(nomad)
			pr.Out.Host = nomad.Host
		},
		FlushInterval: -1, // stream logs, events and monitors as they come
		ErrorLog:      log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	return &Proxy{upstream: rp, rewriter: rw, log: log, metrics: m}
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	kind := "forward"
	defer func() { p.metrics.observe(kind, time.Since(start)) }()
	if (r.Method != http.MethodPut && r.Method != http.MethodPost) || !jobWrite.MatchString(r.URL.Path) {
		p.upstream.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJobBody))
	if err != nil {
		p.fail(w, http.StatusBadRequest, fmt.Errorf("harvest placer: reading the job: %w", err))
		return
	}
	out, d, err := p.rewriter.Rewrite(r.Context(), body)
	var bad *BadJobError
	switch {
	case errors.As(err, &bad):
		kind = "rejected"
		p.fail(w, http.StatusBadRequest, err)
		return
	case err != nil:
		kind = "error"
		p.fail(w, http.StatusInternalServerError, fmt.Errorf("harvest placer: %w", err))
		return
	}
	if d != nil {
		kind = "rewrite"
		p.metrics.selected(d)
		p.log.Info("rewrote harvested job", "path", r.URL.Path, "namespace", d.Namespace, "job", d.Job,
			"type", d.JobType, "classes", d.Outcome.Classes, "fit", d.Outcome.Fit, "peak_mhz", d.Estimate.Peak.CPU,
			"deferred_stages", len(d.Deferred))
		p.record(r, d)
	}
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.ContentLength = int64(len(out))
	r.Header.Set("Content-Length", strconv.Itoa(len(out)))
	p.upstream.ServeHTTP(w, r)
}

// record keeps a registered job's decision (a plan or validate changes
// nothing); a failure to keep it is logged, never in the job's way.
func (p *Proxy) record(r *http.Request, d *Decision) {
	if p.rewriter.Decisions == nil || strings.HasSuffix(r.URL.Path, "/plan") || strings.HasPrefix(r.URL.Path, "/v1/validate/") {
		return
	}
	if err := p.rewriter.Decisions.Record(r.Context(), d); err != nil {
		p.log.Warn("cannot keep the job's decision for harvestctl explain", "namespace", d.Namespace, "job", d.Job, "error", err)
	}
}

// fail answers as Nomad does: a status and the error as plain text, which
// the nomad CLI prints after "Unexpected response code".
func (p *Proxy) fail(w http.ResponseWriter, status int, err error) {
	p.log.Warn("refused job request", "status", status, "error", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintln(w, err.Error())
}

// Metrics are the proxy's Prometheus metrics.
type Metrics struct {
	requests   *prometheus.HistogramVec
	selections *prometheus.CounterVec
}

// NewMetrics registers the proxy's metrics in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "harvest_proxy_request_seconds", Help: "Time through the admission proxy, by kind (forward, rewrite, rejected, error).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"kind"}),
		selections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "harvest_proxy_class_selections_total", Help: "Classes chosen for harvested jobs, by class and fit.",
		}, []string{"class", "fit"}),
	}
	reg.MustRegister(m.requests, m.selections)
	return m
}

func (m *Metrics) observe(kind string, d time.Duration) {
	if m != nil {
		m.requests.WithLabelValues(kind).Observe(d.Seconds())
	}
}

func (m *Metrics) selected(d *Decision) {
	if m == nil {
		return
	}
	if len(d.Outcome.Classes) == 0 {
		m.selections.WithLabelValues(NoClass, d.Outcome.Fit).Inc()
	}
	for _, c := range d.Outcome.Classes {
		m.selections.WithLabelValues(c, d.Outcome.Fit).Inc()
	}
}
