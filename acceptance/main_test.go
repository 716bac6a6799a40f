//go:build acceptance

package acceptance

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/harvest-platform/harvest/internal/localcluster"
)

// cluster is the one local cluster every test of the package shares.
var cluster *localcluster.State

// stack and bin are where the real stack and Harvest's binaries are.
var stack, bin string

// mustBeGone collects pids of task processes that tests leave running on
// purpose: the teardown must stop them.
var (
	mustBeGoneMu sync.Mutex
	mustBeGone   = map[int]string{}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

// placerToken is the token every placer the tests start accepts for
// changes (acl.tokens); harvestctl and the Terraform provider send it from
// HARVEST_PLACER_TOKEN, which run sets.
const placerToken = "acceptance-placer-token-4b1d"

// blobAdminToken is the admin token of every harvest-blob the tests start
// (admin_tokens; harvestctl sends HARVEST_BLOB_ADMIN_TOKEN).
const blobAdminToken = "acceptance-blob-admin-7c2e"

func run(m *testing.M) int {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("HARVEST_PLACER_TOKEN", placerToken)
	os.Setenv("HARVEST_BLOB_ADMIN_TOKEN", blobAdminToken)
	stack = envOr("HARVEST_STACK_BIN", filepath.Join(root, ".cache", "stack", "bin"))
	bin = envOr("HARVEST_BIN", filepath.Join(root, "bin"))
	if demoRun() || testbedRun() {
		return m.Run() // the demo and the testbed start and stop their own clusters
	}
	runDir, err := os.MkdirTemp("", "harvest-acc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "acceptance", Level: hclog.Info})
	// A signal cancels a start in progress, or tears the cluster down.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	interrupted := make(chan struct{})
	go func() {
		<-sigs
		cancel()
		close(interrupted)
	}()
	nodes := localcluster.DefaultNodes(6)
	if secureRun() {
		nodes = localcluster.DefaultNodes(4) // the secure run's tests need four
	}
	if bareRun() {
		nodes = localcluster.DefaultNodes(3) // docs/install.md on an operator's small cluster
	}
	cluster, err = localcluster.Up(ctx, localcluster.Options{
		RunDir: runDir, StackBin: stack, DriverBinary: filepath.Join(bin, "harvest-driver"), Logger: log,
		// every driver reads its primary tenant through the external usage
		// source (harvest-usage-prometheus over go-plugin), its cgroup
		// source the fallback
		UsagePlugin: filepath.Join(bin, "harvest-usage-prometheus"), DevTool: filepath.Join(bin, "harvest-dev"),
		// the harvest-room device beside every driver (room_test.go), but
		// not on the bare run, which follows docs/install.md
		RoomDevice: roomDevice(bin),
		Nodes:      nodes, // a fourth tenant for the placer's "unclassified" case; six storage nodes in five environments
		Secure:     secureRun(),
		Bare:       bareRun(),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "acceptance: local cluster did not start: %v\n(logs in %s)\n", err, filepath.Join(runDir, "logs"))
		return 1
	}
	if cluster.Secure != nil {
		if err := secureSetup(); err != nil {
			fmt.Fprintf(os.Stderr, "acceptance: secure cluster setup: %v\n", err)
			_ = teardown(log)
			return 1
		}
	}
	// An interrupted run still tears the cluster down before it exits.
	var once sync.Once
	var teardownErr error
	down := func() error {
		once.Do(func() { teardownErr = teardown(log) })
		return teardownErr
	}
	go func() {
		<-interrupted
		log.Warn("interrupted: tearing the cluster down")
		_ = down()
		os.Exit(130)
	}()

	code := m.Run()
	if err := down(); err != nil {
		fmt.Fprintf(os.Stderr, "acceptance: teardown: %v\n", err)
		code = 1
	}
	if code == 0 {
		os.RemoveAll(runDir)
	} else {
		fmt.Fprintf(os.Stderr, "acceptance: logs kept in %s\n", filepath.Join(runDir, "logs"))
	}
	return code
}

// teardown stops the cluster and checks that none of its processes, nor the
// tasks the tests left running, survive.
func teardown(log hclog.Logger) error {
	pids := cluster.PIDs()
	if err := localcluster.Down(context.Background(), cluster, log); err != nil {
		return err
	}
	var alive []string
	for _, pid := range pids {
		if processExists(pid) {
			alive = append(alive, fmt.Sprintf("agent pid %d", pid))
		}
	}
	mustBeGoneMu.Lock()
	defer mustBeGoneMu.Unlock()
	for pid, what := range mustBeGone {
		if processExists(pid) {
			alive = append(alive, fmt.Sprintf("%s pid %d", what, pid))
		}
	}
	if len(alive) > 0 {
		return fmt.Errorf("still running after teardown: %s", strings.Join(alive, ", "))
	}
	fmt.Printf("teardown: %d agent processes and %d tasks left running by tests are gone; no mount or cgroup left\n",
		len(pids), len(mustBeGone))
	return nil
}

// roomDevice is the harvest-room plugin for the cluster ("" on the bare
// run).
func roomDevice(bin string) string {
	if bareRun() {
		return ""
	}
	return filepath.Join(bin, "harvest-room")
}
