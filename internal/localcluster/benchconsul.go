package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	consulapi "github.com/hashicorp/consul/api"

	"github.com/harvest-platform/harvest/internal/portclaim"
	"github.com/harvest-platform/harvest/internal/proc"
)

// Consul is one Consul server on its own claimed port block, for
// benchmarks that need the real thing and nothing else.
type Consul struct {
	Addr  string
	PID   int
	dir   string
	claim string
	agent Agent
}

// StartConsul starts binary as a single-server Consul (a data directory
// and on-disk Raft log, as in production; dev mode keeps the Raft log and
// snapshots in memory) under dir, on a port block claimed like a local
// cluster's, and waits for it to lead. env is added to its environment
// (e.g. GOMEMLIMIT=800MiB).
func StartConsul(ctx context.Context, binary, dir string, dev bool, env ...string) (*Consul, error) {
	b, claim, err := claimBlock(DefaultClaimDir(), portclaim.Claim{RunDir: dir, Owner: os.Getpid(), Created: time.Now()})
	if err != nil {
		return nil, err
	}
	p := b.consulServer()
	c := &Consul{Addr: "127.0.0.1:" + strconv.Itoa(p.HTTP), dir: dir, claim: claim}
	c.agent = Agent{Name: "consul-bench", Binary: binary, Dir: dir, Log: filepath.Join(dir, "consul.log"), HTTPAddr: c.Addr}
	// one process stands in for a datacenter's clients, all from 127.0.0.1:
	// Consul's per-address connection limit (200) would refuse them
	cfg := consulServerConfig("consul-bench", p, nil) + "limits {\n  http_max_conns_per_client = 15000\n}\n"
	args := []string{"agent", "-dev", "-config-file", filepath.Join(dir, "config.hcl")}
	if !dev {
		cfg += fmt.Sprintf("data_dir = %q\nserver = true\nbootstrap_expect = 1\n", filepath.Join(dir, "data"))
		args = []string{"agent", "-config-file", filepath.Join(dir, "config.hcl")}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		os.Remove(claim)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.hcl"), []byte(cfg), 0o644); err != nil {
		os.Remove(claim)
		return nil, err
	}
	if err := startAgent(&c.agent, agentEnv(env...), false, args...); err != nil {
		os.Remove(claim)
		return nil, err
	}
	c.PID = c.agent.PID
	client, _ := consulapi.NewClient(&consulapi.Config{Address: c.Addr})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if leader, err := client.Status().Leader(); err == nil && leader != "" {
			if _, _, err := client.KV().Get("harvest-bench-probe", nil); err == nil {
				return c, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			logTail, _ := os.ReadFile(c.agent.Log)
			c.Stop()
			return nil, fmt.Errorf("consul at %s did not elect itself within a minute; its log ends:\n%s", c.Addr, tail(string(logTail), 1500))
		}
	}
}

// Stop ends the server, releases its port block and removes its data.
func (c *Consul) Stop() error {
	stopPID(c.PID, c.agent.Binary, 10*time.Second)
	return errors.Join(os.Remove(c.claim), os.RemoveAll(c.dir))
}

// RSS returns the server's resident memory and its peak, in bytes.
func (c *Consul) RSS() (rss, peak int64, err error) { return proc.RSS(c.PID) }

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
