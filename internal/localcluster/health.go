package localcluster

import (
	"context"
	"fmt"
	"net/http"
	"time"

	consulapi "github.com/hashicorp/consul/api"
	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/internal/connect"
)

// healthTimeout bounds each wait; a cold Nomad client fingerprints in a few
// seconds, so a minute means something is wrong (its log will say what).
const healthTimeout = 90 * time.Second

// waitFor polls check until it reports done, logging its progress every few
// seconds, and fails naming what it waited for and where to look.
func waitFor(ctx context.Context, log hclog.Logger, what, logHint string, check func() (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	start := time.Now()
	lastReport := start
	status := ""
	for {
		done, st := check()
		status = st
		if done {
			log.Info("ready", "part", what, "took", time.Since(start).Round(time.Millisecond))
			return nil
		}
		if time.Since(lastReport) > 5*time.Second {
			log.Info("waiting", "part", what, "status", status)
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (%s); see %s", what, time.Since(start).Round(time.Second), status, logHint)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// NomadClient returns an API client for the cluster's Nomad server (with
// the management token and the CA in a secure cluster).
func (s *State) NomadClient() (*nomadapi.Client, error) {
	if s.Secure == nil {
		return nomadapi.NewClient(&nomadapi.Config{Address: s.NomadAddr()})
	}
	return connect.Nomad{Address: s.NomadAddr(), Token: s.Secure.NomadToken, CAFile: s.Secure.CAFile,
		CertFile: s.Secure.CLICert, KeyFile: s.Secure.CLIKey}.Client()
}

// ConsulClient returns an API client for the cluster's Consul server (with
// the management token and the CA in a secure cluster).
func (s *State) ConsulClient() *consulapi.Client { return s.consulAPI(s.ConsulServer.HTTPAddr) }

func waitConsulLeader(ctx context.Context, log hclog.Logger, s *State, a *Agent) error {
	c := s.consulAPI(a.HTTPAddr)
	return waitFor(ctx, log, "consul server", a.Log, func() (bool, string) {
		leader, err := c.Status().Leader()
		if err != nil {
			return false, err.Error()
		}
		return leader != "", "no leader yet"
	})
}

// waitConsulMembers waits until the server's catalog lists every client
// agent, by node name.
func waitConsulMembers(ctx context.Context, log hclog.Logger, s *State, server *Agent, clients []Agent, nodes []NodeSpec) error {
	c := s.consulAPI(server.HTTPAddr)
	return waitFor(ctx, log, "consul client agents", clients[0].Log, func() (bool, string) {
		members, _, err := c.Catalog().Nodes(nil)
		if err != nil {
			return false, err.Error()
		}
		have := map[string]bool{}
		for _, m := range members {
			have[m.Node] = true
		}
		for _, n := range nodes {
			if !have[n.Name] {
				return false, n.Name + " has not joined"
			}
		}
		return true, ""
	})
}

func waitNomadLeader(ctx context.Context, log hclog.Logger, s *State) error {
	c, err := s.NomadClient()
	if err != nil {
		return err
	}
	return waitFor(ctx, log, "nomad server", s.NomadServer.Log, func() (bool, string) {
		leader, err := c.Status().Leader()
		if err != nil {
			return false, err.Error()
		}
		return leader != "", "no leader yet"
	})
}

// waitNomadClients waits until every client is ready with raw_exec healthy
// and, when installed, the harvest driver detected.
func waitNomadClients(ctx context.Context, log hclog.Logger, s *State, harvestDriver bool) error {
	c, err := s.NomadClient()
	if err != nil {
		return err
	}
	return waitFor(ctx, log, "nomad clients", s.NomadClients[0].Log, func() (bool, string) {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		byName := map[string]*nomadapi.NodeListStub{}
		for _, n := range nodes {
			byName[n.Name] = n
		}
		for _, want := range s.NomadClients {
			n := byName[want.Name]
			switch {
			case n == nil:
				return false, want.Name + " not registered"
			case n.Status != "ready":
				return false, want.Name + " is " + n.Status
			case n.Drivers["raw_exec"] == nil || !n.Drivers["raw_exec"].Healthy:
				return false, want.Name + ": raw_exec not healthy yet"
			case harvestDriver && (n.Drivers["harvest"] == nil || !n.Drivers["harvest"].Detected):
				return false, want.Name + ": harvest driver not detected yet"
			}
		}
		return true, ""
	})
}

func waitMinIO(ctx context.Context, log hclog.Logger, m *MinIOServer) error {
	url := "http://" + m.HTTPAddr + "/minio/health/ready"
	return waitFor(ctx, log, m.Name, m.Log, func() (bool, string) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}
