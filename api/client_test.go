package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClientSendsTheTokenAndJSONAndTellsErrorsApart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/echo":
			if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("Content-Type") != "application/json" {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			b, _ := io.ReadAll(r.Body)
			_, _ = w.Write(b)
		case "/v1/bad":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"reserve_cpu must not be negative"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := Client{Name: "placer", Address: strings.TrimPrefix(srv.URL, "http://"), Token: "s3cret"}
	var out map[string]int
	if err := c.Do(context.Background(), http.MethodPut, "/v1/echo", map[string]int{"a": 1}, &out); err != nil || out["a"] != 1 {
		t.Fatalf("echo: %v %v", out, err)
	}
	if err := c.Do(context.Background(), http.MethodGet, "/v1/gone", nil, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("404: %v, want ErrNotFound", err)
	}
	err := c.Do(context.Background(), http.MethodPut, "/v1/bad", nil, nil)
	if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "placer answered 400 Bad Request") ||
		!strings.Contains(err.Error(), "reserve_cpu must not be negative") {
		t.Fatalf("400: %v", err)
	}
	if err := (Client{Address: srv.URL}).Do(context.Background(), http.MethodPut, "/v1/echo", map[string]int{}, nil); err == nil {
		t.Fatal("a call without the token was answered 2xx")
	}
}
