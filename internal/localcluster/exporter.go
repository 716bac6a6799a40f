package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/harvest-platform/harvest/internal/localcluster/nodecgroup"
)

// usagePluginDir holds the external usage-source plugin, apart from Nomad's
// plugin_dir (Nomad would try to load it as a Nomad plugin).
func usagePluginDir(s *State) string { return filepath.Join(s.RunDir, "usage-plugins") }

// startExporter installs the usage plugin, starts the metrics exporter over
// every node's primary cgroup (or replaying o.Replay's trace as them) and
// waits until it answers; it returns the exporter's /metrics URL.
func startExporter(ctx context.Context, o *Options, s *State, b Block,
	launch func(*Agent, string, []string, ...string) error, agent func(string, string, int) Agent) (string, error) {
	if err := installPlugin(o.UsagePlugin, usagePluginDir(s)); err != nil {
		return "", err
	}
	s.Exporter = agent("exporter", o.DevTool, b.exporter())
	args := []string{"dev-cluster", "exporter", "-listen", s.Exporter.HTTPAddr}
	if o.Replay != nil {
		// the replay's wall clock (Trace.Began) starts now unless the
		// options say when, in the exporter's flags and cluster.json alike
		args = append(args, replayArgs(o, s, b, time.Now().UTC())...)
	} else {
		for _, n := range o.Nodes {
			args = append(args, "-cgroup", nodecgroup.For(b.Base, n.Name).Primary)
		}
	}
	if err := launch(&s.Exporter, "", nil, args...); err != nil {
		return "", err
	}
	url := "http://" + s.Exporter.HTTPAddr + "/metrics"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				o.Logger.Info("ready", "part", "exporter", "url", url)
				return url, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("the metrics exporter did not answer on %s (log %s)", url, s.Exporter.Log)
}
