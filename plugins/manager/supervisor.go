package manager

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/harvest-platform/harvest/plugins/base"
)

// instance supervises one external plugin: it launches the binary over
// go-plugin, watches the process, takes the failures its callers report, and
// kills and restarts it with exponential backoff and jitter.
type instance[T base.Base] struct {
	m    *Manager
	cfg  *PluginConfig
	typ  string // base.PluginType*
	path string
	sup  Supervision
	gp   plugin.Plugin // the type's GRPCPlugin, with the call timeout
	log  hclog.Logger

	mu       sync.Mutex
	impl     T
	client   *plugin.Client
	cmd      *exec.Cmd
	gen      int // bumped by every launch: reports about an older one are ignored
	config   map[string]string
	up       bool
	upSince  time.Time
	restarts int
	attempt  int
	lastErr  error
	closed   bool
	timer    *time.Timer
}

// launch starts the binary and readies the plugin: handshake, dispense,
// PluginInfo (its type must match) and SetConfig.
func (in *instance[T]) launch() (T, *plugin.Client, *exec.Cmd, error) {
	var zero T
	cmd := exec.Command(in.path, in.cfg.Args...)
	dieWithParent(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  base.Handshake,
		Plugins:          plugin.PluginSet{in.typ: in.gp},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		Managed:          true,
		Logger:           in.log,
	})
	fail := func(what string, err error) (T, *plugin.Client, *exec.Cmd, error) {
		client.Kill()
		return zero, nil, nil, fmt.Errorf("%s %s: %w", in.path, what, err)
	}
	rpc, err := client.Client()
	if err != nil {
		return fail("start", err)
	}
	raw, err := rpc.Dispense(in.typ)
	if err != nil {
		return fail("dispense", err)
	}
	impl, ok := raw.(T)
	if !ok {
		return fail("dispense", fmt.Errorf("%T is not a %s", raw, in.typ))
	}
	info, err := impl.PluginInfo()
	if err != nil {
		return fail("PluginInfo", err)
	}
	if info.Type != in.typ {
		return fail("PluginInfo", fmt.Errorf("the plugin is a %q, the block wants a %s", info.Type, in.typ))
	}
	in.mu.Lock()
	config := in.config
	in.mu.Unlock()
	if err := impl.SetConfig(config); err != nil {
		return fail("SetConfig", err)
	}
	in.log.Debug("plugin launched", "name", info.Name, "version", info.Version, "pid", cmd.Process.Pid)
	return impl, client, cmd, nil
}

// start launches the plugin (the first time, or again after a failure) and
// schedules another attempt when that fails.
func (in *instance[T]) start(restart bool) {
	impl, client, cmd, err := in.launch()
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		if client != nil {
			client.Kill()
		}
		return
	}
	if err != nil {
		in.lastErr = err
		delay := in.nextDelay()
		in.timer = time.AfterFunc(delay, func() { in.start(restart) })
		in.mu.Unlock()
		in.m.met.failures.WithLabelValues(in.cfg.Name, KindStart).Inc()
		in.log.Error("plugin failed to start", "error", err, "retry_in", delay)
		in.m.notify(in.state())
		return
	}
	in.impl, in.client, in.cmd = impl, client, cmd
	in.gen++
	gen := in.gen
	in.up, in.upSince, in.lastErr = true, time.Now(), nil
	if restart {
		in.restarts++
	}
	in.mu.Unlock()
	if restart {
		in.m.met.restarts.WithLabelValues(in.cfg.Name).Inc()
		in.log.Info("plugin restarted", "pid", cmd.Process.Pid)
	} else {
		in.log.Info("plugin started", "pid", cmd.Process.Pid)
	}
	in.m.met.up.WithLabelValues(in.cfg.Name).Set(1)
	in.m.notify(in.state())
	go in.watch(gen, client)
}

// get returns the running plugin, or ErrPluginDown.
func (in *instance[T]) get() (T, int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.up {
		var zero T
		return zero, 0, fmt.Errorf("%w: %s %q: %v", ErrPluginDown, in.typ, in.cfg.Name, in.lastErr)
	}
	return in.impl, in.gen, nil
}

// state reports where the plugin is.
func (in *instance[T]) state() State {
	in.mu.Lock()
	defer in.mu.Unlock()
	st := State{Name: in.cfg.Name, Type: in.typ, Driver: in.cfg.Driver, External: true,
		Up: in.up, Restarts: in.restarts, Err: in.lastErr}
	if in.up && in.cmd != nil && in.cmd.Process != nil {
		st.Pid = in.cmd.Process.Pid
	}
	return st
}

// setConfig keeps config for later restarts and sends it to the running
// plugin.
func (in *instance[T]) setConfig(config map[string]string) error {
	in.mu.Lock()
	in.config = config
	in.mu.Unlock()
	impl, gen, err := in.get()
	if err != nil {
		return nil // applied at the restart
	}
	err = impl.SetConfig(config)
	in.report(context.Background(), gen, err)
	return err
}

// close stops supervising and kills the plugin.
func (in *instance[T]) close() {
	in.mu.Lock()
	in.closed = true
	if in.timer != nil {
		in.timer.Stop()
	}
	client := in.client
	in.up = false
	in.mu.Unlock()
	if client != nil {
		client.Kill()
	}
}
