package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/admissions"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/agent/declarations"
	"github.com/harvest-platform/harvest/placer/agent/sequencer"
	"github.com/harvest-platform/harvest/placer/config"
	"github.com/harvest-platform/harvest/placer/proxy"
)

// Agent is a running placer.
type Agent struct {
	set        config.Settings // the config, decoded once
	log        hclog.Logger
	store      *history.Store
	refresher  *classes.Refresher
	metrics    *Metrics
	listener   net.Listener
	proxy      *http.Server // nil when the proxy is off
	proxyL     net.Listener
	sequencer  *sequencer.Sequencer
	strategies strategies
	weights    *proxy.LiveWeights     // Algorithm 1's, the policy document's over the file's
	declared   *declarations.Declared // tenant declarations and the policy document
	importer   *historyImporter       // history_import; nil when off
	auth       *authorizer            // who may call the API
	now        func() time.Time       // the clock ingest checks sample times against
}

// New connects the placer to Nomad and Consul as cfg says and binds its
// HTTP address (so a port clash fails here, before anything runs).
func New(cfg config.Config, log hclog.Logger) (*Agent, error) {
	set, err := cfg.Decode()
	if err != nil {
		return nil, err
	}
	consul, err := cfg.Consul.Client()
	if err != nil {
		return nil, fmt.Errorf("consul client: %w", err)
	}
	nomad, err := cfg.Nomad.Client()
	if err != nil {
		return nil, fmt.Errorf("nomad client: %w", err)
	}
	l, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("http_addr: %w", err)
	}
	if l, err = cfg.TLS.Wrap(l); err != nil {
		l.Close()
		return nil, fmt.Errorf("tls: %w", err)
	}
	a := &Agent{set: set, log: log, metrics: NewMetrics(), listener: l, now: time.Now}
	if a.auth, err = newAuthorizer(set.ACL, nomad, log.Named("acl"), a.metrics); err != nil {
		l.Close()
		return nil, err
	}
	a.store = history.NewStore(kv.NewConsul(consul), cfg.Consul.KVPrefix())
	if set.MemoryLimit > 0 {
		debug.SetMemoryLimit(set.MemoryLimit)
		log.Info("Go memory limit set", "bytes", set.MemoryLimit)
	}
	if f, err := a.store.InitFormat(context.Background()); err != nil {
		log.Warn("history format marker unreadable; writers keep their last format", "error", err)
	} else {
		log.Info("tenant history format", "day_format", f)
	}
	a.refresher = &classes.Refresher{Store: a.store, Config: set.Classifier,
		Log: log.Named("classes"), Metrics: a.metrics, Now: time.Now, Retention: set.Retention, JobTypes: set.JobTypes,
		ReadConcurrency: set.ReadConcurrency, SurvivalSample: set.SurvivalSample}
	a.weights = proxy.NewLiveWeights(set.Weights)
	a.setupStrategies(cfg, nomad)
	a.refresher.Nodes = cluster.NodeAPI{View: a.strategies.view} // the loops' watch and node cache
	a.setupDeclarations(a.strategies.view)
	if cfg.Proxy.Address != "" {
		if err := a.setupProxy(cfg, nomad); err != nil {
			l.Close()
			return nil, err
		}
	}
	// last: it may start a plugin process, which Run's return ends
	if set.HistoryImport != nil {
		if a.importer, err = newHistoryImporter(set.HistoryImport, a.store, a.metrics, log); err != nil {
			l.Close()
			if a.proxyL != nil {
				a.proxyL.Close()
			}
			return nil, err
		}
	}
	return a, nil
}

// setupProxy binds the admission proxy and the stage sequencer behind it.
func (a *Agent) setupProxy(cfg config.Config, nomad *nomadapi.Client) error {
	address, err := cfg.Nomad.URL()
	if err != nil {
		return err
	}
	upstream, err := url.Parse(address)
	if err != nil {
		return fmt.Errorf("nomad address: %w", err)
	}
	transport, err := cfg.Nomad.Transport() // Nomad's TLS, never the placer's token
	if err != nil {
		return err
	}
	rw := &proxy.Rewriter{
		Classes: a.strategies.classes, History: a.store, Strategies: a.strategies.rules(),
		Thresholds: a.set.JobTypes, LiveWeights: a.weights, Namespaces: cfg.Proxy.Namespaces,
		Affinity: cfg.Proxy.ClassPlacement == "affinity", NoClasses: cfg.Proxy.ClassPlacement == "none",
		NoRoomRule: cfg.Proxy.RoomPlacement == "none", Decisions: decisionLog{a.store},
		Rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0)),
	}
	if cfg.Proxy.RoomPlacement == "device" || cfg.Proxy.RoomPlacement == "auto" {
		c := cluster.NewCoreMHz(a.strategies.view, time.Now)
		c.RequireDevice = cfg.Proxy.RoomPlacement == "auto"
		rw.RoomDevice = c
	}
	l, err := net.Listen("tcp", cfg.Proxy.Address)
	if err != nil {
		return fmt.Errorf("proxy address: %w", err)
	}
	if l, err = cfg.Proxy.ListenerTLS().Wrap(l); err != nil {
		l.Close()
		return fmt.Errorf("proxy tls: %w", err)
	}
	a.proxyL = l
	adm := admissions.New(a.store)
	a.proxy = &http.Server{Handler: proxy.New(upstream, transport, rw, a.log.Named("proxy"), proxy.NewMetrics(a.metrics.Registry),
		proxy.Options{Admissions: adm.As("proxy"), MaxBody: int64(cfg.Proxy.MaxBodyMB) << 20}),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute}
	a.sequencer = sequencer.New(nomad, a.strategies.view, a.store, adm, a.log.Named("stages"))
	if p := a.strategies.partition; p != nil {
		a.sequencer.Finished = p.Observe
	}
	return nil
}

// setupDeclarations wires the documents to what they change: the weights
// (a.weights), the refresher's thresholds and the harvested nodes' meta.
func (a *Agent) setupDeclarations(view cluster.View) {
	a.declared = declarations.New(a.store, view, a.weights, a.set.Weights, a.log.Named("declarations"))
	a.refresher.Thresholds = a.declared.Thresholds
}

// ProxyAddr is where the admission proxy listens ("" when off).
func (a *Agent) ProxyAddr() string {
	if a.proxyL == nil {
		return ""
	}
	return a.proxyL.Addr().String()
}

// Addr is the address the HTTP API listens on.
func (a *Agent) Addr() string { return a.listener.Addr().String() }

// Run serves the API and runs the loops (runtime.go) until ctx ends; then
// it shuts the servers down gracefully, waits for the loops and closes the
// history importer's plugin.
func (a *Agent) Run(ctx context.Context) error {
	if a.importer != nil {
		defer a.importer.close() // after the loops have ended (below)
	}
	start, cancelStart := context.WithTimeout(ctx, 30*time.Second)
	if err := a.declared.LoadWeights(start); err != nil { // the stored weights before the first job
		a.log.Warn("policy document unread: the configured weights until a sync reads it", "error", err)
	}
	cancelStart()
	srv := &http.Server{Handler: a.handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(a.listener) }()
	a.log.Info("placer API listening", "addr", a.Addr(), "refresh_interval", a.set.Interval)
	if a.proxy != nil {
		go func() { errc <- a.proxy.Serve(a.proxyL) }()
		a.log.Info("admission proxy listening: point NOMAD_ADDR here", "addr", a.ProxyAddr())
	}
	a.strategies.logEnabled(a.log)
	loops, stopLoops := context.WithCancel(ctx)
	wait := a.startLoops(loops)
	defer func() { stopLoops(); wait() }() // before the importer's plugin closes

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if a.proxy != nil {
		if err := a.proxy.Shutdown(shutdown); err != nil {
			return err
		}
	}
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
