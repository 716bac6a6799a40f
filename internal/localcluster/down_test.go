package localcluster

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// Stopping the jobs garbage-collects every terminal allocation on its
// client; one the client has collected already (its gc_max_allocs) is not
// a failure, while any other error is still reported.
func TestStopJobsTakesAnAllocationItsClientCollectedAsCollected(t *testing.T) {
	gcs := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/jobs":
			w.Write([]byte(`[]`))
		case r.URL.Path == "/v1/allocations":
			w.Write([]byte(`[{"ID":"collected","ClientStatus":"complete"},{"ID":"broken","ClientStatus":"failed"}]`))
		case strings.HasPrefix(r.URL.Path, "/v1/client/allocation/"):
			id := strings.Split(r.URL.Path, "/")[4]
			gcs[id]++
			if id == "collected" {
				http.Error(w, nomadNoSuchAllocation+", or allocation not eligible for GC", http.StatusInternalServerError)
				return
			}
			http.Error(w, "rpc error: node down", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var logged bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logged, Level: hclog.Info})
	s := &State{NomadServer: Agent{HTTPAddr: strings.TrimPrefix(srv.URL, "http://")}}
	if err := stopJobs(context.Background(), s, log); err != nil {
		t.Fatal(err)
	}
	if gcs["collected"] != 1 || gcs["broken"] != 1 {
		t.Fatalf("gc calls %v: want one for each terminal allocation", gcs)
	}
	if strings.Contains(logged.String(), "alloc=collected") {
		t.Errorf("an allocation its client had collected is logged as a failure:\n%s", logged.String())
	}
	if !strings.Contains(logged.String(), "alloc=broken") {
		t.Errorf("a real gc failure is not logged:\n%s", logged.String())
	}
}
