package testbed

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/localcluster"
)

// placer is the harvest-placer process the run starts beside the cluster.
type placer struct {
	proc      localcluster.Agent
	api, log  string
	proxyAddr string
}

// startPlacer starts harvest-placer with the admission proxy, classes
// computed once (the span's tenants are classified before it starts, as
// the simulator does: "once per day", L281, and a testbed span of a day),
// and the class placement the policy asks for. Under H the placer also
// escalates a job blocked on its classes, at the escalation block's
// defaults (a 30 s wall delay per step, or Config.EscalationDelay): H is
// the whole platform, and a job whose class has no room would otherwise
// wait on it for ever.
func startPlacer(ctx context.Context, c Config, st *localcluster.State) (*placer, error) {
	p := &placer{api: fmt.Sprintf("127.0.0.1:%d", st.SparePort(0)), proxyAddr: fmt.Sprintf("127.0.0.1:%d", st.SparePort(1)),
		log: filepath.Join(c.Out, "placer.log")}
	config := filepath.Join(c.Out, "placer.hcl")
	if err := os.WriteFile(config, []byte(c.placerHCL(st, p.api, p.proxyAddr)), 0o644); err != nil {
		return nil, err
	}
	var err error
	if p.proc, err = startAgent(c, "placer", "harvest-placer", config, p.log); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get("http://" + p.api + "/v1/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	p.stop()
	return nil, fmt.Errorf("the placer did not answer on %s (log %s)", p.api, p.log)
}

// placerHCL is the placer's config for the run's policy: Algorithm 1's
// class placement and escalation under H alone, the room placement the
// run names.
func (c Config) placerHCL(st *localcluster.State, api, proxyAddr string) string {
	placement, extra := "constraint", "escalation {\n  enabled = true\n}"
	if c.EscalationDelay > 0 {
		// passes at least five a delay, so a short delay is kept to within a fifth
		interval := min(5*time.Second, max(c.EscalationDelay/5, 100*time.Millisecond))
		extra = fmt.Sprintf("escalation {\n  enabled  = true\n  delay    = %q\n  interval = %q\n}", c.EscalationDelay, interval)
	}
	if c.Policy != H {
		placement, extra = "none", ""
	}
	roomPlacement := "constraint"
	if c.RoomDevice {
		roomPlacement = "device"
	}
	if c.NoRoomRule {
		roomPlacement = "none"
	}
	return st.PlacerHCL(localcluster.PlacerConfig{HTTPAddr: api, ProxyAddr: proxyAddr, Prefix: contract.DefaultKVPrefix,
		Token: st.PlacerToken, Proxy: fmt.Sprintf("class_placement = %q\n  room_placement  = %q", placement, roomPlacement), Extra: extra})
}

// startAgent starts `<binary> agent -config config` from c.Bin with the
// harness's process handling (killed with this process, stopped by a pid
// checked against /proc), its output in log.
func startAgent(c Config, name, binary, config, log string) (localcluster.Agent, error) {
	path, err := filepath.Abs(filepath.Join(c.Bin, binary)) // StopProcess checks it against /proc
	if err != nil {
		return localcluster.Agent{}, err
	}
	a := localcluster.Agent{Name: name, Binary: path, Dir: c.Out, Log: log}
	return a, localcluster.StartProcess(&a, "agent", "-config", config)
}

// stop sends SIGTERM and waits (SIGKILL after 30 s).
func (p *placer) stop() { localcluster.StopProcess(p.proc, 30*time.Second) }

// importHistory imports the history window with `harvestctl history
// import`, before the placer starts (as docs/install.md does), so its first
// classification reads it.
func importHistory(ctx context.Context, c Config, st *localcluster.State, historyCSV string) error {
	return harvestctl(ctx, c, st, "history", "import", "-format", "long", "-consul-addr", st.ConsulAddr(), "-prefix", contract.DefaultKVPrefix, historyCSV)
}

func harvestctl(ctx context.Context, c Config, st *localcluster.State, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, "harvestctl"), args...)
	cmd.Env = append(os.Environ(), "HARVEST_PLACER_TOKEN="+st.PlacerToken)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("harvestctl %s: %w: %s", strings.Join(args[:2], " "), err, out)
	}
	return nil
}

// label asks the placer to classify with `harvestctl classes refresh` and
// waits until every client carries a class label; it returns each
// client's class and pattern.
func label(ctx context.Context, c Config, st *localcluster.State, p *placer, nomad *nomadapi.Client) (map[string]string, error) {
	if err := harvestctl(ctx, c, st, "classes", "refresh", "-placer-addr", p.api); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		nodes, _, err := nomad.Nodes().List(nil)
		if err != nil {
			return nil, err
		}
		labels := map[string]string{}
		for _, stub := range nodes {
			n, _, err := nomad.Nodes().Info(stub.ID, nil)
			if err != nil {
				return nil, err
			}
			if n.Meta[contract.NodeClass] != "" && n.Status == "ready" {
				labels[n.Name] = n.Meta[contract.NodeClass] + " (" + n.Meta[contract.NodePattern] + ")"
			}
		}
		if len(labels) >= c.Clients {
			return labels, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("the clients carry no class label after two minutes (placer log %s)", p.log)
}
