package localcluster

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/internal/localcluster/nodecgroup"
	"github.com/harvest-platform/harvest/internal/replay"
)

// ReplayOptions have the cluster's metrics exporter replay a CPU trace as
// the clients' primary tenants (Options.Replay): each client's primary
// cgroup is served as its NodeSpec.Tenant in the trace, on a node of
// Options.NodeCores, from Began (default: when the exporter starts).
type ReplayOptions struct {
	// File is the trace: the long CSV format (tenant,timestamp,cpu_percent),
	// optionally gzipped. It must have samples of every node's tenant.
	File string
	// Start is the trace time the replay begins at.
	Start time.Time
	// Speedup is how many trace seconds pass per wall second; 0 means 1.
	Speedup float64
	// Began is the wall time Start is replayed at; zero means when the
	// exporter starts. Until then the primaries' CPU counters stay at 0
	// (replay.Trace.CPUSeconds), as if they were idle.
	Began time.Time
}

// ReplayState is what the exporter replays, as cluster.json records it: a
// caller builds the same replay.Trace with Trace.
type ReplayState struct {
	File      string            `json:"file"`
	Start     time.Time         `json:"start"`
	Began     time.Time         `json:"began"` // wall time at Start (ReplayOptions.Began, or when the exporter started)
	Speedup   float64           `json:"speedup"`
	NodeCores int               `json:"node_cores"`
	Tenants   map[string]string `json:"tenants"` // primary cgroup -> tenant
}

// Trace loads the trace the exporter replays, with its Start, Began and
// Speedup.
func (r *ReplayState) Trace() (*replay.Trace, error) {
	t, err := replay.Load(r.File)
	if err != nil {
		return nil, err
	}
	t.Start, t.Began, t.Speedup = r.Start, r.Began, r.Speedup
	return t, nil
}

// checkReplay checks Replay against the rest of the options and loads its
// trace once, so that a trace lacking a node's tenant stops Up before
// anything starts.
func (o *Options) checkReplay() error {
	r := o.Replay
	if r == nil {
		return nil
	}
	switch {
	case o.UsagePlugin == "" || o.DevTool == "" || o.DriverBinary == "":
		return errors.New("a replay is served by the metrics exporter: it needs UsagePlugin, DevTool and DriverBinary")
	case o.Bare:
		return errors.New("a bare cluster has no metrics exporter to replay a trace")
	case r.Start.IsZero():
		return errors.New("Start (the trace time to begin at) is required")
	case r.Speedup < 0:
		return fmt.Errorf("Speedup %v: want a positive number", r.Speedup)
	}
	if r.Speedup == 0 {
		r.Speedup = 1
	}
	var err error
	if r.File, err = filepath.Abs(r.File); err != nil {
		return err
	}
	t, err := replay.Load(r.File)
	if err != nil {
		return err
	}
	tenants := make([]string, len(o.Nodes))
	for i, n := range o.Nodes {
		tenants[i] = n.Tenant
	}
	return t.Check(tenants...)
}

// replayArgs are the exporter's arguments for o.Replay, begun at
// o.Replay.Began or else at now; they record the replay in s.
func replayArgs(o *Options, s *State, b Block, now time.Time) []string {
	r := o.Replay
	began := now
	if !r.Began.IsZero() {
		began = r.Began
	}
	s.Replay = &ReplayState{File: r.File, Start: r.Start, Began: began, Speedup: r.Speedup, NodeCores: o.nodeCores(),
		Tenants: map[string]string{}}
	args := []string{"-replay", r.File, "-replay-start", r.Start.Format(time.RFC3339Nano),
		"-replay-began", began.Format(time.RFC3339Nano), "-speedup", strconv.FormatFloat(r.Speedup, 'g', -1, 64),
		"-node-cores", strconv.Itoa(o.nodeCores())}
	for _, n := range o.Nodes {
		cg := nodecgroup.For(b.Base, n.Name).Primary
		s.Replay.Tenants[cg] = n.Tenant
		args = append(args, "-tenant", cg+"="+n.Tenant)
	}
	return args
}
