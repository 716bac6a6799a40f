package localcluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/harvest-platform/harvest/internal/hostsweep"
)

// StateFile is the name of the cluster's state file inside its run folder.
const StateFile = "cluster.json"

// Agent is one process of the cluster.
type Agent struct {
	Name     string   `json:"name"`
	Binary   string   `json:"binary"` // absolute path, checked against /proc before a pid is signalled
	Dir      string   `json:"dir"`    // config and data
	Log      string   `json:"log"`
	PID      int      `json:"pid"`
	HTTPAddr string   `json:"http_addr"`
	Args     []string `json:"args"` // to start it again (Restart)
	Env      []string `json:"env,omitempty"`
}

// NomadClient is a Nomad client agent and what makes it a harvested node.
type NomadClient struct {
	Agent
	Meta         map[string]string `json:"meta"`
	ConsulAgent  string            `json:"consul_agent"` // HTTP address of its own Consul client agent
	CgroupParent string            `json:"cgroup_parent"`
	// PrimaryCgroup is where this node's primary tenant runs: the harvest
	// driver measures it; a test puts a "primary tenant" process in it.
	PrimaryCgroup string `json:"primary_cgroup"`
	// DriverMetrics is where its harvest driver serves /metrics.
	DriverMetrics string `json:"driver_metrics"`
	// HarvestCgroup is the parent cgroup its harvest driver runs harvested
	// tasks under (the driver's harvest_cgroup).
	HarvestCgroup string `json:"harvest_cgroup,omitempty"`
}

// MinIOServer is one MinIO server with its own data folder and credentials.
type MinIOServer struct {
	Agent
	Node      string `json:"node"` // the Nomad client it belongs to
	DataDir   string `json:"data_dir"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
}

// State is everything known about a running cluster; Up writes it to
// RunDir/cluster.json after every process it starts.
type State struct {
	RunDir    string `json:"run_dir"`
	PortBase  int    `json:"port_base"`
	ClaimFile string `json:"claim_file"`
	Owner     int    `json:"owner_pid"`
	StackBin  string `json:"stack_bin"`
	PluginDir string `json:"plugin_dir"`
	// ClientRoot holds the Nomad clients' folders (config, data_dir with
	// the task directories). It is RunDir unless the harvested tasks' user
	// cannot pass through RunDir's path (a clone under a 0700 home folder):
	// then a folder of its own under the system's temporary folder.
	ClientRoot    string        `json:"client_root,omitempty"`
	ConsulServer  Agent         `json:"consul_server"`
	ConsulClients []Agent       `json:"consul_clients"`
	NomadServer   Agent         `json:"nomad_server"`
	NomadClients  []NomadClient `json:"nomad_clients"`
	MinIO         []MinIOServer `json:"minio"`
	// Exporter serves the host's and the primary cgroups' metrics to the
	// drivers' external usage source (PID 0: not started).
	Exporter Agent `json:"exporter"`
	// Replay is set when the exporter replays a CPU trace as the primary
	// tenants (Options.Replay): its Trace is the one the exporter serves.
	Replay *ReplayState `json:"replay,omitempty"`
	// PlacerToken is a token for the acl block of the placer the demo starts
	// on the cluster (env.sh exports it as HARVEST_PLACER_TOKEN).
	PlacerToken string `json:"placer_token"`
	// Secure is set for a cluster started with Options.Secure: TLS and
	// default-deny ACLs on Consul and Nomad (secure.go).
	Secure *Secure `json:"secure,omitempty"`
}

// NomadAddr is the Nomad HTTP API address (NOMAD_ADDR): https:// in a
// secure cluster.
func (s *State) NomadAddr() string {
	if s.Secure != nil {
		return "https://" + s.NomadServer.HTTPAddr
	}
	return "http://" + s.NomadServer.HTTPAddr
}

// ConsulAddr is the Consul server's HTTP address (CONSUL_HTTP_ADDR):
// https://host:port in a secure cluster, host:port otherwise.
func (s *State) ConsulAddr() string {
	if s.Secure != nil {
		return "https://" + s.ConsulServer.HTTPAddr
	}
	return s.ConsulServer.HTTPAddr
}

// agents lists every started process in the order Down stops them.
func (s *State) agents() []*Agent {
	var out []*Agent
	for _, tier := range s.stopTiers() {
		out = append(out, tier...)
	}
	return out
}

// stopTiers groups the agents for Down: each tier stops in parallel, after
// the one before it (clients before their servers, Consul last).
func (s *State) stopTiers() [][]*Agent {
	var nomadClients, minio, consulClients []*Agent
	for i := range s.NomadClients {
		nomadClients = append(nomadClients, &s.NomadClients[i].Agent)
	}
	for i := range s.MinIO {
		minio = append(minio, &s.MinIO[i].Agent)
	}
	for i := range s.ConsulClients {
		consulClients = append(consulClients, &s.ConsulClients[i])
	}
	return [][]*Agent{nomadClients, {&s.NomadServer, &s.Exporter}, minio, consulClients, {&s.ConsulServer}}
}

func (s *State) save() error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.RunDir, StateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.RunDir, StateFile))
}

// Load reads the state of the cluster whose run folder is runDir.
func Load(runDir string) (*State, error) {
	path := filepath.Join(runDir, StateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("localcluster: %s is corrupt: %w", path, err)
	}
	return &s, nil
}

// roots are the folders everything of the cluster lives under: RunDir, and
// ClientRoot when it is elsewhere.
func (s *State) roots() []string {
	if s.ClientRoot == "" || s.ClientRoot == s.RunDir {
		return []string{s.RunDir}
	}
	return []string{s.RunDir, s.ClientRoot}
}

// PIDs lists the pid of every process Up started.
func (s *State) PIDs() []int {
	var out []int
	for _, a := range s.agents() {
		if a.PID != 0 {
			out = append(out, a.PID)
		}
	}
	return out
}

// Stopped names the started processes that no longer run.
func (s *State) Stopped() []string {
	var out []string
	for _, a := range s.agents() {
		if a.PID != 0 && !hostsweep.Alive(a.PID, a.Binary) {
			out = append(out, a.Name)
		}
	}
	return out
}

// SparePort returns one of the four ports of the cluster's block kept free
// for Harvest's own daemons (placer, blob front) that a test or demo starts.
func (s *State) SparePort(i int) int {
	if i < 0 || i > 3 {
		panic("localcluster: spare ports are 0-3")
	}
	return s.PortBase + 96 + i
}
