package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history"
)

// Agent is a running placer.
type Agent struct {
	cfg       Config
	log       hclog.Logger
	store     *history.Store
	refresher *Refresher
	metrics   *Metrics
	interval  time.Duration
	listener  net.Listener
}

// New connects the placer to Nomad and Consul as cfg says and binds its
// HTTP address (so a port clash fails here, before anything runs).
func New(cfg Config, log hclog.Logger) (*Agent, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	interval, _ := cfg.interval()
	retention, _ := cfg.retention()
	ccfg, _ := cfg.classifier()
	consul, err := consulapi.NewClient(&consulapi.Config{Address: cfg.Consul.Address, Token: cfg.Consul.Token})
	if err != nil {
		return nil, fmt.Errorf("consul client: %w", err)
	}
	nomad, err := nomadapi.NewClient(&nomadapi.Config{Address: cfg.Nomad.Address, SecretID: cfg.Nomad.Token})
	if err != nil {
		return nil, fmt.Errorf("nomad client: %w", err)
	}
	l, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("http_addr: %w", err)
	}
	a := &Agent{cfg: cfg, log: log, metrics: NewMetrics(), interval: interval, listener: l}
	a.store = history.NewStore(history.NewConsulKV(consul), cfg.Consul.Prefix)
	a.refresher = &Refresher{Store: a.store, Nodes: &NomadNodes{Client: nomad}, Config: ccfg,
		Log: log.Named("classes"), Metrics: a.metrics, Now: time.Now, Retention: retention}
	return a, nil
}

// Addr is the address the HTTP API listens on.
func (a *Agent) Addr() string { return a.listener.Addr().String() }

// Run serves the API and refreshes the classes at start and every
// interval, until ctx ends; then it shuts the server down gracefully.
func (a *Agent) Run(ctx context.Context) error {
	srv := &http.Server{Handler: a.handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(a.listener) }()
	a.log.Info("placer API listening", "addr", a.Addr(), "refresh_interval", a.interval)

	go func() {
		ticker := time.NewTicker(a.interval)
		defer ticker.Stop()
		for {
			_, _ = a.refresher.Refresh(ctx) // errors are logged and counted
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
