package driver

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
)

// fingerprintPeriod is how often the driver re-announces its health.
const fingerprintPeriod = 30 * time.Second

// errNotYet is returned by task operations this version does not perform yet.
var errNotYet = errors.New("harvest driver: running tasks is not available in this version")

// Driver is the harvest task driver.
type Driver struct {
	logger hclog.Logger
	config Config
	ctx    context.Context
	cancel context.CancelFunc
}

var _ drivers.DriverPlugin = (*Driver)(nil)

// New returns a driver that logs to logger; Nomad's plugin loader calls it.
func New(logger hclog.Logger) *Driver {
	ctx, cancel := context.WithCancel(context.Background())
	return &Driver{logger: logger.Named(Name), config: Config{Enabled: true}, ctx: ctx, cancel: cancel}
}

func (d *Driver) PluginInfo() (*base.PluginInfoResponse, error) { return pluginInfo, nil }
func (d *Driver) ConfigSchema() (*hclspec.Spec, error)          { return configSpec, nil }
func (d *Driver) TaskConfigSchema() (*hclspec.Spec, error)      { return taskConfigSpec, nil }
func (d *Driver) Capabilities() (*drivers.Capabilities, error)  { return capabilities, nil }

// SetConfig decodes the client's plugin config block.
func (d *Driver) SetConfig(c *base.Config) error {
	var cfg Config
	if len(c.PluginConfig) != 0 {
		if err := base.MsgPackDecode(c.PluginConfig, &cfg); err != nil {
			return err
		}
	}
	d.config = cfg
	return nil
}

// Fingerprint reports the driver healthy (or disabled) now and then periodically.
func (d *Driver) Fingerprint(ctx context.Context) (<-chan *drivers.Fingerprint, error) {
	ch := make(chan *drivers.Fingerprint)
	go func() {
		defer close(ch)
		ticker := time.NewTicker(fingerprintPeriod)
		defer ticker.Stop()
		for {
			select {
			case ch <- d.fingerprint():
			case <-ctx.Done():
				return
			case <-d.ctx.Done():
				return
			}
			select {
			case <-ticker.C:
			case <-ctx.Done():
				return
			case <-d.ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}

func (d *Driver) fingerprint() *drivers.Fingerprint {
	if !d.config.Enabled {
		return &drivers.Fingerprint{Health: drivers.HealthStateUndetected, HealthDescription: "disabled"}
	}
	return &drivers.Fingerprint{
		Attributes:        map[string]*pstructs.Attribute{"driver.harvest.version": pstructs.NewStringAttribute(pluginInfo.PluginVersion)},
		Health:            drivers.HealthStateHealthy,
		HealthDescription: drivers.DriverHealthy,
	}
}

func (d *Driver) RecoverTask(*drivers.TaskHandle) error { return errNotYet }
func (d *Driver) StartTask(*drivers.TaskConfig) (*drivers.TaskHandle, *drivers.DriverNetwork, error) {
	return nil, nil, errNotYet
}
func (d *Driver) WaitTask(context.Context, string) (<-chan *drivers.ExitResult, error) {
	return nil, errNotYet
}
func (d *Driver) StopTask(string, time.Duration, string) error    { return errNotYet }
func (d *Driver) DestroyTask(string, bool) error                  { return nil }
func (d *Driver) InspectTask(string) (*drivers.TaskStatus, error) { return nil, errNotYet }
func (d *Driver) SignalTask(string, string) error                 { return errNotYet }
func (d *Driver) ExecTask(string, []string, time.Duration) (*drivers.ExecTaskResult, error) {
	return nil, errNotYet
}
func (d *Driver) TaskStats(context.Context, string, time.Duration) (<-chan *drivers.TaskResourceUsage, error) {
	return nil, errNotYet
}

// TaskEvents has no events to report yet; the channel closes with the driver.
func (d *Driver) TaskEvents(ctx context.Context) (<-chan *drivers.TaskEvent, error) {
	ch := make(chan *drivers.TaskEvent)
	go func() {
		defer close(ch)
		select {
		case <-ctx.Done():
		case <-d.ctx.Done():
		}
	}()
	return ch, nil
}

// Shutdown stops the driver's background work.
func (d *Driver) Shutdown() { d.cancel() }
