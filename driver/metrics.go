package driver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveMetrics serves the driver's registry (the usage plugin's
// harvest_plugin_up, restarts_total, failures_total and fallback_active) at
// GET /metrics on addr until the driver shuts down. A Nomad task driver has
// no metrics endpoint of its own, so this is the way to see them.
func (d *Driver) serveMetrics(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.metrics, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-d.ctx.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.logger.Error("metrics endpoint stopped", "error", err)
		}
	}()
	d.logger.Info("serving metrics", "address", l.Addr().String())
	return nil
}
