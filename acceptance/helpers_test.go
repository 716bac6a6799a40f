//go:build acceptance

package acceptance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/internal/connect"
)

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("acceptance: go.mod not found above the working directory")
		}
		dir = parent
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// parentPID is a process's parent (0 when it is gone): /proc/<pid>/stat is
// "pid (comm) state ppid ...", and comm may hold spaces.
func parentPID(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

func processExists(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return !(i > 0 && i+2 < len(stat) && stat[i+2] == 'Z')
}

func uniqueName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// nomadCLI runs the real nomad CLI against the cluster and returns its output.
func nomadCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(stack, "nomad"), args...)
	cmd.Env = append(append(os.Environ(), "NOMAD_ADDR="+cluster.NomadAddr()), nomadEnv("")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nomad %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// harvestctlOnCluster runs harvestctl against the cluster's Nomad (its
// address, and on a secure cluster its CA and management token) and Consul.
func harvestctlOnCluster(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "harvestctl"), args...)
	cmd.Env = append(append(os.Environ(), "NOMAD_ADDR="+cluster.NomadAddr(), "CONSUL_HTTP_ADDR="+cluster.ConsulAddr()), nomadEnv("")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("harvestctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// writeJob writes an HCL job file for the CLI to read.
func writeJob(t *testing.T, hcl string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.nomad.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var (
	nomadOnce sync.Once
	nomadAPI  *nomadapi.Client
	nomadErr  error
)

// nomadClient is one API client for every test, so connections are reused.
func nomadClient(t *testing.T) *nomadapi.Client {
	t.Helper()
	nomadOnce.Do(func() { nomadAPI, nomadErr = cluster.NomadClient() })
	if nomadErr != nil {
		t.Fatal(nomadErr)
	}
	return nomadAPI
}

// waitAllocs waits until a job has exactly want allocations and done holds
// for each.
func waitAllocs(t *testing.T, jobID string, want int, timeout time.Duration, done func(*nomadapi.AllocationListStub) bool) []*nomadapi.AllocationListStub {
	t.Helper()
	return pollAllocs(t, jobID, fmt.Sprintf("%d allocations done", want), timeout, func(allocs []*nomadapi.AllocationListStub) bool {
		return len(allocs) == want && !slices.ContainsFunc(allocs, func(a *nomadapi.AllocationListStub) bool { return !done(a) })
	})
}

// waitCompleted waits until want allocations of a job are complete and none is
// still pending or running. An allocation that failed on the way (a driver that
// refused the start on a busy node, say) is allowed when Nomad's reschedule
// completed the work elsewhere; why it failed is logged, so a real fault shows.
func waitCompleted(t *testing.T, jobID string, want int, timeout time.Duration) []*nomadapi.AllocationListStub {
	t.Helper()
	allocs := pollAllocs(t, jobID, fmt.Sprintf("%d allocations complete", want), timeout, func(allocs []*nomadapi.AllocationListStub) bool {
		n := 0
		for _, a := range allocs {
			switch {
			case a.ClientStatus == nomadapi.AllocClientStatusPending || a.ClientStatus == nomadapi.AllocClientStatusRunning:
				return false
			case complete(a):
				n++
			}
		}
		return n >= want
	})
	var done []*nomadapi.AllocationListStub
	for _, a := range allocs {
		if complete(a) {
			done = append(done, a)
		} else if a.ClientStatus == nomadapi.AllocClientStatusFailed {
			t.Logf("job %s: allocation %s on %s failed before the work completed elsewhere: %s", jobID, a.ID[:8], a.NodeName, taskEvents(a))
		}
	}
	return done
}

// pollAllocs reads a job's allocations until ok holds for them, and fails
// the test, with each allocation's state and task events, at the timeout.
func pollAllocs(t *testing.T, jobID, what string, timeout time.Duration, ok func([]*nomadapi.AllocationListStub) bool) []*nomadapi.AllocationListStub {
	t.Helper()
	c := nomadClient(t)
	var allocs []*nomadapi.AllocationListStub
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var err error
		if allocs, _, err = c.Jobs().Allocations(jobID, false, nil); err != nil {
			t.Fatal(err)
		}
		if ok(allocs) {
			return allocs
		}
	}
	var states []string
	for _, a := range allocs {
		states = append(states, fmt.Sprintf("%s on %s: %s %s", a.ID[:8], a.NodeName, a.ClientStatus, taskEvents(a)))
	}
	t.Fatalf("job %s: wanted %s within %s, have %d: %v", jobID, what, timeout, len(allocs), states)
	return nil
}

// taskEvents is an allocation's task events, for a failure message.
func taskEvents(a *nomadapi.AllocationListStub) string {
	var events []string
	for task, state := range a.TaskStates {
		for _, e := range state.Events {
			events = append(events, fmt.Sprintf("%s: %s %s", task, e.Type, e.DisplayMessage))
		}
	}
	return "[" + strings.Join(events, "; ") + "]"
}

func complete(a *nomadapi.AllocationListStub) bool {
	return a.ClientStatus == nomadapi.AllocClientStatusComplete
}

func nodeID(t *testing.T, name string) string {
	t.Helper()
	nodes, _, err := nomadClient(t).Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("node %s not registered", name)
	return ""
}

func purgeJob(t *testing.T, jobID string) {
	t.Cleanup(func() {
		_, _, _ = nomadClient(t).Jobs().Deregister(jobID, true, nil)
	})
}

// getJSON reads a JSON document from one of Harvest's daemons' HTTP APIs
// (addr with or without "http://") and fails the test unless it is 200 OK.
func getJSON(t *testing.T, addr, path string, out any) {
	t.Helper()
	if !strings.Contains(addr, "://") {
		addr = harvestScheme() + "://" + addr
	}
	resp, err := harvestHTTP().Get(addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s%s: %s", addr, path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// placerAPI is the api client of the placer at addr, trusting the
// cluster's CA as harvestHTTP does and, as getJSON, with no token.
func placerAPI(addr string) api.Client {
	c := api.Client{Name: "placer", Address: addr, Timeout: 2 * time.Minute}
	if !strings.Contains(addr, "://") {
		c.Address = harvestScheme() + "://" + addr
	}
	if sec := cluster.Secure; sec != nil {
		c.TLS = connect.ClientTLS{CAFile: sec.CAFile}
	}
	return c
}

// mustRead is what read (a typed api read, such as
// placerAPI(addr).Greylist) answers; an error fails the test.
func mustRead[T any](t *testing.T, read func(context.Context) (T, error)) T {
	t.Helper()
	v, err := read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}
