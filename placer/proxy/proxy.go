package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/harvest-platform/harvest/placer/agent/reply"
)

// DefaultMaxBody bounds a job register, plan or validate body unless the
// proxy is told otherwise.
const DefaultMaxBody = 16 << 20

// Proxy forwards to Nomad, rewriting harvested jobs on the way. It never
// adds a token: the caller's X-Nomad-Token (or Authorization) header goes to
// Nomad unchanged and Nomad decides what the caller may do; the placer's
// own token is used by the sequencer and the escalator only, on jobs the
// proxy admitted (Admissions).
type Proxy struct {
	upstream   *httputil.ReverseProxy
	rewriter   *Rewriter
	log        hclog.Logger
	metrics    *Metrics
	admissions Admissions // nil: none kept
	maxBody    int64
}

// Admissions keeps, per harvested job, the run (JobModifyIndex) the proxy
// admitted: the stage sequencer starts stage jobs for those runs only, so
// that a job sent straight to Nomad carrying Harvest's meta gets none.
type Admissions interface {
	Admit(ctx context.Context, namespace, job string, jobModifyIndex uint64) error
}

// Options are the proxy's optional settings.
type Options struct {
	Admissions Admissions
	// MaxBody bounds a job request's body (default DefaultMaxBody); a larger
	// one is refused with 413 before anything reaches Nomad.
	MaxBody int64
}

// New returns a proxy to the Nomad API at nomad, reached through transport
// (Nomad's TLS; nil: http.DefaultTransport).
func New(nomad *url.URL, transport http.RoundTripper, rw *Rewriter, log hclog.Logger, m *Metrics, opts ...Options) *Proxy {
	p := &Proxy{rewriter: rw, log: log, metrics: m, maxBody: DefaultMaxBody}
	for _, o := range opts {
		if o.Admissions != nil {
			p.admissions = o.Admissions
		}
		if o.MaxBody > 0 {
			p.maxBody = o.MaxBody
		}
	}
	p.upstream = &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(nomad)
			pr.Out.Host = nomad.Host
		},
		ModifyResponse: p.admit,
		FlushInterval:  -1, // stream logs, events and monitors as they come
		ErrorLog:       log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	return p
}

// jobRequestType says whether a PUT or POST to path may carry a job, and as
// which of Nomad's request types Nomad reads it (as Nomad routes it:
// /v1/jobs, /v1/validate/job, and everything under /v1/job/ whose body
// names a job).
func jobRequestType(path string) (reflect.Type, bool) {
	switch {
	case path == "/v1/jobs":
		return registerType, true
	case path == "/v1/validate/job":
		return validateType, true
	case strings.HasPrefix(path, "/v1/job/") && strings.HasSuffix(path, "/plan"):
		return planType, true
	case strings.HasPrefix(path, "/v1/job/"):
		return registerType, true
	}
	return nil, false
}

type admissionKey struct{}

type admission struct{ namespace, job string }

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	kind := "forward"
	defer func() { p.metrics.observe(kind, time.Since(start)) }()
	typ, jobPath := jobRequestType(r.URL.Path)
	if (r.Method != http.MethodPut && r.Method != http.MethodPost) || !jobPath {
		p.upstream.ServeHTTP(w, r)
		return
	}
	if r.ContentLength > p.maxBody {
		kind = "rejected"
		p.fail(w, http.StatusRequestEntityTooLarge, fmt.Errorf("harvest placer: the request body is %d bytes, more than the proxy's limit of %d", r.ContentLength, p.maxBody))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody))
	if err != nil {
		kind = "rejected"
		p.fail(w, reply.BodyStatus(err), fmt.Errorf("harvest placer: reading the job: %w", err))
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		r.Body = io.NopCloser(bytes.NewReader(body)) // no job (periodic force, evaluate...): Nomad's to judge
		p.upstream.ServeHTTP(w, r)
		return
	}
	out, d, err := p.rewrite(r, body, typ)
	var bad *BadJobError
	switch {
	case errors.As(err, &bad):
		kind = "rejected"
		p.fail(w, http.StatusBadRequest, err)
		return
	case err != nil:
		// fail closed: a harvested job that cannot be rewritten is not
		// forwarded as it is
		kind = "error"
		p.fail(w, http.StatusInternalServerError, fmt.Errorf("harvest placer: the harvested job was not sent to Nomad: %w", err))
		return
	}
	if d != nil {
		kind = "rewrite"
		p.metrics.selected(d)
		p.log.Info("rewrote harvested job", "path", r.URL.Path, "namespace", d.Namespace, "job", d.Job,
			"type", d.JobType, "classes", d.Outcome.Classes, "fit", d.Outcome.Fit, "peak_mhz", d.Estimate.Peak.CPU,
			"deferred_stages", len(d.Deferred))
		if typ == registerType {
			p.record(r, d)
			if p.admissions != nil {
				r = r.WithContext(context.WithValue(r.Context(), admissionKey{}, admission{namespace: d.Namespace, job: d.Job}))
			}
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.ContentLength = int64(len(out))
	r.Header.Set("Content-Length", strconv.Itoa(len(out)))
	p.upstream.ServeHTTP(w, r)
}

// record keeps a registered job's decision for harvestctl explain; a
// failure to keep it is logged, never in the job's way.
func (p *Proxy) record(r *http.Request, d *Decision) {
	if p.rewriter.Decisions == nil {
		return
	}
	if err := p.rewriter.Decisions.Record(r.Context(), d); err != nil {
		p.log.Warn("cannot keep the job's decision for harvestctl explain", "namespace", d.Namespace, "job", d.Job, "error", err)
	}
}

// rewrite runs the rewriter, turning a panic into an error (fail closed).
func (p *Proxy) rewrite(r *http.Request, body []byte, typ reflect.Type) (out []byte, d *Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("rewrite panicked", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			out, d, err = nil, nil, fmt.Errorf("internal error while rewriting: %v", v)
		}
	}()
	return p.rewriter.RewriteRequest(r.Context(), body, Request{Type: typ, QueryNamespace: r.URL.Query().Get("namespace")})
}

// admit keeps the run Nomad registered for a rewritten job, from Nomad's
// answer, so that the sequencer will start its stages. When it cannot be
// kept, the caller is told: the job is registered, but its later stages
// would never start.
func (p *Proxy) admit(resp *http.Response) error {
	a, ok := resp.Request.Context().Value(admissionKey{}).(admission)
	if !ok || resp.StatusCode != http.StatusOK {
		return nil
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	if err == nil {
		var plain []byte
		if plain, err = decoded(raw, resp.Header.Get("Content-Encoding")); err == nil {
			var reply struct{ JobModifyIndex uint64 }
			if err = json.Unmarshal(plain, &reply); err == nil {
				err = p.admissions.Admit(resp.Request.Context(), a.namespace, a.job, reply.JobModifyIndex)
			}
		}
	}
	if err != nil {
		p.log.Error("cannot keep the admission of a registered harvested job: its later stages will not start",
			"namespace", a.namespace, "job", a.job, "error", err)
		msg := fmt.Sprintf("harvest placer: Nomad registered job %q, but the placer could not record it, so its later stages "+
			"will not start (%v); run the job again", a.job, err)
		resp.StatusCode, resp.Status = http.StatusInternalServerError, "500 Internal Server Error"
		resp.Header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
		resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(msg+"\n")), int64(len(msg)+1)
	}
	return nil
}

// decoded undoes a gzip Content-Encoding.
func decoded(raw []byte, encoding string) ([]byte, error) {
	if !strings.EqualFold(encoding, "gzip") {
		return raw, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, 1<<20))
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
