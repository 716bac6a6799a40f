package manager

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/harvest-platform/harvest/plugins/base"
	"github.com/harvest-platform/harvest/plugins/historyimporter"
)

// ErrPluginDown is what a supervised plugin's calls return (wrapped, with the
// reason) between its failure and its restart.
var ErrPluginDown = errors.New("plugin is down")

// watchInterval is how often a running plugin's process is checked.
const watchInterval = 100 * time.Millisecond

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

// nextDelay is the backoff before the next attempt: restart_backoff doubled
// per failed attempt in a row, capped at restart_backoff_max, then jittered
// to between half and all of that. Call with mu held.
func (in *instance[T]) nextDelay() time.Duration {
	d := in.sup.RestartBackoff
	for i := 0; i < in.attempt && d < in.sup.RestartBackoffMax; i++ {
		d *= 2
	}
	d = min(d, in.sup.RestartBackoffMax)
	in.attempt++
	return d/2 + rand.N(d/2+1)
}

// watch notices the process exiting between calls.
func (in *instance[T]) watch(gen int, client *plugin.Client) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for range t.C {
		in.mu.Lock()
		current := in.gen == gen && in.up && !in.closed
		in.mu.Unlock()
		if !current {
			return
		}
		if client.Exited() {
			in.fail(gen, KindCrash, errors.New("the plugin process exited"))
			return
		}
	}
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

// report takes the outcome of a call made on launch gen: a crash or a hang
// takes the plugin down for a restart; the plugin's own error is counted.
func (in *instance[T]) report(ctx context.Context, gen int, err error) {
	if err == nil {
		return
	}
	in.mu.Lock()
	exited := in.gen == gen && in.client != nil && in.client.Exited()
	in.mu.Unlock()
	switch {
	case exited, status.Code(err) == codes.Unavailable, errors.Is(err, historyimporter.ErrTruncated):
		in.fail(gen, KindCrash, err)
	case errors.Is(err, context.DeadlineExceeded):
		in.fail(gen, KindHang, err)
	case errors.Is(err, context.Canceled) && ctx.Err() != nil: // the caller gave up
	default:
		in.m.met.failures.WithLabelValues(in.cfg.Name, KindError).Inc()
		in.log.Warn("plugin call failed", "error", err)
	}
}

// fail takes launch gen down: kills its process and schedules a restart.
func (in *instance[T]) fail(gen int, kind string, err error) {
	in.mu.Lock()
	if in.closed || gen != in.gen || !in.up {
		in.mu.Unlock()
		return
	}
	in.up, in.lastErr = false, fmt.Errorf("%s: %w", kind, err)
	if time.Since(in.upSince) >= in.sup.RestartBackoffMax {
		in.attempt = 0 // it had been running well: start the backoff over
	}
	delay := in.nextDelay()
	client, cmd := in.client, in.cmd
	in.mu.Unlock()

	in.m.met.failures.WithLabelValues(in.cfg.Name, kind).Inc()
	in.m.met.up.WithLabelValues(in.cfg.Name).Set(0)
	in.log.Error("plugin down", "kind", kind, "error", err, "restart_in", delay)
	in.m.notify(in.state())
	go func() {
		if cmd.Process != nil { // a hung plugin would not stop when asked
			_ = cmd.Process.Kill()
		}
		client.Kill()
		in.mu.Lock()
		defer in.mu.Unlock()
		if !in.closed {
			in.timer = time.AfterFunc(delay, func() { in.start(true) })
		}
	}()
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
