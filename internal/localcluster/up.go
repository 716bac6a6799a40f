package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/harvest-platform/harvest/internal/localcluster/nodecgroup"
	"github.com/harvest-platform/harvest/internal/portclaim"
)

// Up starts a cluster as o describes and returns once every part is healthy.
// If any part fails, what was started is torn down and the error names the
// part and its log.
func Up(ctx context.Context, o Options) (*State, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	log := o.Logger
	if _, err := os.Stat(filepath.Join(o.RunDir, StateFile)); err == nil {
		if old, err := Load(o.RunDir); err == nil && len(Leftovers(old)) > 0 {
			return nil, fmt.Errorf("a cluster is already running in %s: stop it first (make cluster-down)", o.RunDir)
		}
	}
	SweepStale(ctx, o.ClaimDir, log)
	clientRoot, err := clientRootFor(o.RunDir, log)
	if err != nil {
		return nil, err
	}

	owner := 0
	if !o.Detached {
		owner = os.Getpid()
	}
	block, claimFile, err := claimBlock(o.ClaimDir, portclaim.Claim{RunDir: o.RunDir, Owner: owner, Created: time.Now()})
	if err != nil {
		if clientRoot != o.RunDir {
			os.Remove(clientRoot)
		}
		return nil, err
	}
	log.Info("claimed ports", "from", block.Base, "to", block.Base+blockSize-1)
	s := &State{
		RunDir: o.RunDir, PortBase: block.Base, ClaimFile: claimFile, Owner: owner,
		StackBin: o.StackBin, PluginDir: filepath.Join(o.RunDir, "plugins"), PlacerToken: randomHex(16),
		ClientRoot: clientRoot,
	}
	if err := os.MkdirAll(filepath.Join(o.RunDir, "logs"), 0o755); err != nil {
		os.Remove(claimFile)
		return nil, err
	}
	if err := start(ctx, &o, s, block); err != nil {
		log.Error("cluster did not come up; tearing down what started", "error", err)
		if derr := Down(context.Background(), s, log); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	return s, nil
}

func start(ctx context.Context, o *Options, s *State, b Block) error {
	bin := func(name string) string {
		p, err := filepath.EvalSymlinks(filepath.Join(o.StackBin, name))
		if err != nil {
			return filepath.Join(o.StackBin, name)
		}
		return p
	}
	agent := func(name, binary string, port int) Agent {
		return Agent{
			Name: name, Binary: binary, Dir: filepath.Join(s.RunDir, name),
			Log: filepath.Join(s.RunDir, "logs", name+".log"), HTTPAddr: "127.0.0.1:" + strconv.Itoa(port),
		}
	}
	launch := func(a *Agent, config string, extraEnv []string, args ...string) error {
		if err := os.MkdirAll(a.Dir, 0o700); err != nil {
			return err
		}
		if config != "" {
			if err := os.WriteFile(filepath.Join(a.Dir, "config.hcl"), []byte(config), 0o600); err != nil {
				return err
			}
		}
		a.Args, a.Env = args, extraEnv
		if err := startAgent(a, agentEnv(extraEnv...), o.Detached, args...); err != nil {
			return err
		}
		o.Logger.Info("started", "part", a.Name, "pid", a.PID, "addr", a.HTTPAddr)
		return s.save()
	}

	if o.Secure {
		var err error
		if s.Secure, err = newSecure(s.RunDir); err != nil {
			return fmt.Errorf("certificates and tokens: %w", err)
		}
	}
	// Consul: a dev server, then one client agent per Nomad client.
	cp := b.consulServer()
	s.ConsulServer = agent("consul-server", bin("consul"), cp.HTTP)
	if err := launch(&s.ConsulServer, consulServerConfig("consul-server", cp, s.Secure), nil,
		"agent", "-dev", "-config-file", filepath.Join(s.RunDir, "consul-server", "config.hcl")); err != nil {
		return err
	}
	if err := waitConsulLeader(ctx, o.Logger, s, &s.ConsulServer); err != nil {
		return err
	}
	if s.Secure != nil {
		if err := setupConsulACL(s); err != nil {
			return err
		}
	}
	join := "127.0.0.1:" + strconv.Itoa(cp.SerfLAN)
	for i, n := range o.Nodes {
		p := b.consulClient(i)
		s.ConsulClients = append(s.ConsulClients, agent("consul-"+n.Name, bin("consul"), p.HTTP))
		a := &s.ConsulClients[i]
		cfg := consulClientConfig(n.Name, filepath.Join(a.Dir, "data"), p, join, s.Secure)
		if err := launch(a, cfg, nil, "agent", "-config-file", filepath.Join(a.Dir, "config.hcl")); err != nil {
			return err
		}
	}
	if err := waitConsulMembers(ctx, o.Logger, s, &s.ConsulServer, s.ConsulClients, o.Nodes); err != nil {
		return err
	}

	// Nomad: one server, then the clients with the harvest driver installed.
	np := b.nomadServer()
	s.NomadServer = agent("nomad-server", bin("nomad"), np.HTTP)
	scfg := nomadServerConfig("nomad-server", filepath.Join(s.RunDir, "nomad-server", "data"), np, s.ConsulServer.HTTPAddr, s.Secure)
	if err := launch(&s.NomadServer, scfg, nil, "agent", "-config", filepath.Join(s.RunDir, "nomad-server", "config.hcl")); err != nil {
		return err
	}
	if err := waitNomadLeader(ctx, o.Logger, s); err != nil {
		return err
	}
	if s.Secure != nil {
		if err := bootstrapNomadACL(ctx, s); err != nil {
			return err
		}
		if err := setupWorkloadIdentity(s); err != nil {
			return err
		}
		o.Logger.Info("secure cluster: TLS on, Consul and Nomad ACLs in default-deny, workload identities accepted by Consul")
	}
	for _, plugin := range []string{o.DriverBinary, o.RoomDevice} {
		if err := installPlugin(plugin, s.PluginDir); err != nil {
			return err
		}
	}
	exporterURL := ""
	if o.UsagePlugin != "" && o.DriverBinary != "" && !o.Bare {
		var err error
		if exporterURL, err = startExporter(ctx, o, s, b, launch, agent); err != nil {
			return err
		}
	}
	totalCompute, err := o.totalCompute()
	if err != nil {
		return err
	}
	for i, n := range o.Nodes {
		p, cg := b.nomadClient(i), nodecgroup.For(b.Base, n.Name)
		c := NomadClient{
			Agent: agent("nomad-"+n.Name, bin("nomad"), p.HTTP), Meta: n.Meta(),
			ConsulAgent: s.ConsulClients[i].HTTPAddr, CgroupParent: cg.Parent,
			PrimaryCgroup: cg.Primary, DriverMetrics: "127.0.0.1:" + strconv.Itoa(b.driverMetrics(i)),
			HarvestCgroup: cg.Harvested,
		}
		if err := nodecgroup.MakePrimary(c.PrimaryCgroup); err != nil {
			return fmt.Errorf("primary tenant cgroup of %s: %w", n.Name, err)
		}
		c.Agent.Name = n.Name // the node name jobs constrain on
		c.Agent.Dir = filepath.Join(s.ClientRoot, "nomad-"+n.Name)
		s.NomadClients = append(s.NomadClients, c)
		a := &s.NomadClients[i]
		pluginConfig := ""
		if exporterURL != "" {
			pluginConfig = filepath.Join(a.Dir, "usage-plugins.hcl")
			if err := os.MkdirAll(a.Dir, 0o700); err != nil {
				return err
			}
			text := usagePluginConfig(usagePluginDir(s), filepath.Base(o.UsagePlugin), exporterURL, a.PrimaryCgroup, o.NodeCores)
			if err := os.WriteFile(pluginConfig, []byte(text), 0o600); err != nil {
				return err
			}
		}
		cfg := nomadClientConfig(nomadClientSpec{
			usagePluginConfig: pluginConfig, driverMetrics: a.DriverMetrics,
			name: n.Name, dataDir: filepath.Join(a.Dir, "data"), pluginDir: s.PluginDir,
			cgroupParent: a.CgroupParent, server: "127.0.0.1:" + strconv.Itoa(np.RPC),
			consulAddr: a.ConsulAgent, meta: a.Meta, harvestDriver: o.DriverBinary != "", primaryCgroup: a.PrimaryCgroup,
			harvestCgroup: a.HarvestCgroup, secure: s.Secure,
			cores: o.NodeCores, reserveCPU: o.reserveCPU(), totalCompute: totalCompute,
			roomFile: roomFileOf(o, a.Dir),
		}, p)
		// harvested tasks run as nobody: they must pass through the client
		// root and the client's folder to reach their task folders
		for _, d := range []string{s.ClientRoot, a.Dir, filepath.Join(a.Dir, "data")} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return err
			}
			if err := os.Chmod(d, 0o711); err != nil {
				return err
			}
		}
		if err := launch(&a.Agent, cfg, nil, "agent", "-config", filepath.Join(a.Dir, "config.hcl")); err != nil {
			return err
		}
	}
	if err := waitNomadClients(ctx, o.Logger, s, o.DriverBinary != ""); err != nil {
		return err
	}

	// MinIO: one server per Nomad client, each with its own data and
	// credentials (a bare cluster has none: its storage job brings them).
	for i, n := range o.Nodes {
		if o.Bare {
			break
		}
		p := b.minio(i)
		m := MinIOServer{Agent: agent("minio-"+n.Name, bin("minio"), p.API), Node: n.Name,
			AccessKey: "harvest-" + randomHex(6), SecretKey: randomHex(20)}
		m.DataDir = filepath.Join(m.Dir, "data")
		s.MinIO = append(s.MinIO, m)
		a := &s.MinIO[i]
		if err := os.MkdirAll(a.DataDir, 0o700); err != nil {
			return err
		}
		env := []string{"MINIO_ROOT_USER=" + a.AccessKey, "MINIO_ROOT_PASSWORD=" + a.SecretKey,
			"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CALLHOME_ENABLE=off"}
		if err := launch(&a.Agent, "", env, "server", a.DataDir, "--quiet",
			"--address", a.HTTPAddr, "--console-address", "127.0.0.1:"+strconv.Itoa(p.Console)); err != nil {
			return err
		}
	}
	for i := range s.MinIO {
		if err := waitMinIO(ctx, o.Logger, &s.MinIO[i]); err != nil {
			return err
		}
	}
	if s.Secure != nil {
		if err := writeStorageCredentials(ctx, s); err != nil {
			return fmt.Errorf("storage credentials variable: %w", err)
		}
		return s.save()
	}
	return nil
}

// installPlugin puts the driver binary into the plugin folder. Nomad skips
// symlinks there, so it is hard-linked, or copied across file systems.
func installPlugin(src, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil || src == "" {
		return err
	}
	dst := filepath.Join(dir, filepath.Base(src))
	os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}
