package blobd

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/versity/versitygw/s3err"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/internal/command"
	"github.com/harvest-platform/harvest/storage/front"
)

// serveAdmin serves the operator API: GET /v1/health, /v1/status (the
// repair's progress, for `harvestctl blob status`), /v1/metrics and
// /v1/objects?bucket=B&key=K (where an object's replicas are, for
// `harvestctl explain object`); POST
// /v1/scrub and /v1/gc run a scrubber or garbage collector pass now and
// answer its report; POST /v1/safe-mode/confirm is the operator's word that
// the nodes that put the front in safe mode are gone.
func serveAdmin(c *Config, be *front.Backend, log hclog.Logger) (func(), error) {
	addr := c.Admin
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, be.Status())
	})
	mux.Handle("GET /v1/metrics", promhttp.HandlerFor(be.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /v1/objects", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("bucket") == "" || !q.Has("key") {
			writeError(w, http.StatusBadRequest, "want ?bucket=BUCKET&key=KEY")
			return
		}
		o, err := be.Explain(r.Context(), q.Get("bucket"), q.Get("key"))
		if err != nil {
			status, msg := s3Answer(err)
			writeError(w, status, msg)
			return
		}
		writeJSON(w, o)
	})
	mux.HandleFunc("POST "+string(api.BlobScrub), func(w http.ResponseWriter, r *http.Request) {
		rep, err := be.Upkeep().ScrubPass(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, rep)
	})
	mux.HandleFunc("POST "+string(api.BlobCollectGarbage), func(w http.ResponseWriter, r *http.Request) {
		rep, err := be.Upkeep().GCPass(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, rep)
	})
	mux.HandleFunc("POST "+string(api.BlobConfirmSafeMode), func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]bool{"was_on": be.Health().ConfirmSafeMode()})
	})
	handler, err := c.adminGuard(mux, log) // security.go
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if c.AdminTLS != nil {
		if ln, err = c.AdminTLS.Wrap(ln); err != nil {
			ln.Close()
			return nil, err
		}
	}
	// a scrub or GC pass may take long: no write timeout, but slow or idle
	// clients are cut off
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin API stopped", "error", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = command.PrintJSON(w, v)
}

// s3Answer is the status and message of an error the front answers S3
// clients with (NoSuchKey, NoSuchBucket: versitygw's APIError, bare or in
// a BucketError); anything else is a 503 with the error.
func s3Answer(err error) (int, string) {
	var api s3err.APIError
	var bucket s3err.BucketError
	switch {
	case errors.As(err, &bucket):
		api = bucket.APIError
	case !errors.As(err, &api):
		return http.StatusServiceUnavailable, err.Error()
	}
	return api.HTTPStatusCode, api.Code + ": " + api.Description
}

// writeError answers status with the API's {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = command.PrintJSON(w, map[string]string{"error": msg})
}
