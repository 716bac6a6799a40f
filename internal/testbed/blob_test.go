package testbed

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/nomad/jobspec2"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

// A task of a run with a blob tier reads its object through the S3 API
// with a SigV4-signed GET, its payload hash signed too (versitygw refuses
// a request without it) (the object its job's first object plus its
// allocation index names, modulo the dataset), then sleeps its length;
// a failed read is said on stderr and the task goes on.
func TestTasksReadTheirObjectSigned(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed (make clients installs it)")
	}
	var mu sync.Mutex
	var paths, auths []string
	fail := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		paths, auths = append(paths, r.URL.Path), append(auths, r.Header.Get("Authorization"))
		if r.Header.Get("X-Amz-Content-Sha256") != emptySHA256 {
			http.Error(w, "MissingContentSha256", http.StatusBadRequest) // as versitygw answers
			return
		}
		if fail {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("data"))
	}))
	defer srv.Close()

	j := &job{ID: "tb-h-1-00004", StreamJob: schedsim.StreamJob{Stages: [][]float64{{1.2, 0.6}, {0.3}}}}
	spec := jobSpec{Policy: H, MHzPerCore: 2500, Speedup: 12,
		Reads: &taskReads{Endpoint: srv.URL, AccessKey: "testbed-ak", SecretKey: "sk", Objects: 5}}.forJob(3)
	parsed, err := jobspec2.ParseWithConfig(&jobspec2.ParseConfig{Path: "job.hcl", Body: []byte(jobHCL(j, spec)), Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	task := parsed.TaskGroups[0].Tasks[0]
	script := task.Config["args"].([]any)[1].(string)
	run := func(index string) string {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = append(os.Environ(), "NOMAD_ALLOC_INDEX="+index)
		for k, v := range task.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("task script: %v: %s", err, out)
		}
		return string(out)
	}
	if out := run("1"); out != "" {
		t.Fatalf("a read that succeeded printed %q", out)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	if out := run("0"); !strings.Contains(out, "reading table-3 failed") {
		t.Fatalf("a failed read printed %q: want it named", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 2 || paths[0] != "/testbed-input/table-4" || paths[1] != "/testbed-input/table-3" {
		t.Fatalf("paths %v: want objects (3+1)%%5 and (3+0)%%5", paths)
	}
	for _, a := range auths {
		if !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=testbed-ak/") || !strings.Contains(a, "/us-east-1/s3/aws4_request") ||
			!strings.Contains(a, "SignedHeaders=host;x-amz-content-sha256;x-amz-date") {
			t.Fatalf("authorization %q: want SigV4 for s3 with the run's key", a)
		}
	}
}
