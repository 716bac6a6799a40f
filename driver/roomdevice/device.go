package roomdevice

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/device"
	"github.com/hashicorp/nomad/plugins/shared/hclspec"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/internal/setting"
)

// Device is the harvest-room device plugin.
type Device struct {
	logger hclog.Logger

	mu         sync.Mutex
	roomFile   string
	period     time.Duration
	staleAfter time.Duration
	count      int    // the instances last fingerprinted (core-0 .. core-<count-1>)
	lastErr    string // the last room file error logged, so each is logged once
	now        func() time.Time
}

// New is the plugin, unconfigured.
func New(logger hclog.Logger) *Device {
	return &Device{logger: logger.Named(contract.RoomDevicePlugin), period: DefaultPeriod, staleAfter: DefaultStaleAfter, now: time.Now}
}

// PluginInfo describes the plugin.
func (d *Device) PluginInfo() (*base.PluginInfoResponse, error) { return pluginInfo, nil }

// ConfigSchema is the plugin block's schema.
func (d *Device) ConfigSchema() (*hclspec.Spec, error) { return configSpec, nil }

// SetConfig reads the plugin block.
func (d *Device) SetConfig(c *base.Config) error {
	var cfg Config
	if len(c.PluginConfig) > 0 {
		if err := base.MsgPackDecode(c.PluginConfig, &cfg); err != nil {
			return err
		}
	}
	if cfg.RoomFile == "" {
		return errors.New("harvest-room: room_file is required: the harvest driver's room_file on this client")
	}
	period, err := setting.PositiveDuration("harvest-room: period", cfg.Period, DefaultPeriod)
	if err != nil {
		return err
	}
	stale, err := setting.PositiveDuration("harvest-room: stale_after", cfg.StaleAfter, DefaultStaleAfter)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.roomFile, d.period, d.staleAfter = cfg.RoomFile, period, stale
	return nil
}

// Fingerprint sends the device's instances now and again whenever their
// health changes (read every period).
func (d *Device) Fingerprint(ctx context.Context) (<-chan *device.FingerprintResponse, error) {
	d.mu.Lock()
	period := d.period
	d.mu.Unlock()
	out := make(chan *device.FingerprintResponse)
	go func() {
		defer close(out)
		var last []*device.Device
		timer := time.NewTimer(0)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
				timer.Reset(period)
			}
			now := d.instancesNow()
			if last != nil && sameHealth(last, now) {
				continue
			}
			last = now
			d.logger.Debug("room", "instances", len(now), "healthy", healthyCount(now))
			group := &device.DeviceGroup{Vendor: contract.RoomDeviceVendor, Type: contract.RoomDeviceType, Name: contract.RoomDeviceName, Devices: now}
			select {
			case out <- device.NewFingerprint(group):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// instancesNow reads the room file and remembers the instances' IDs for
// Reserve.
func (d *Device) instancesNow() []*device.Device {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := contract.RoomFile{}, false
	data, err := os.ReadFile(d.roomFile)
	if err == nil {
		f, err = contract.ParseRoomFile(data)
		ok = err == nil
	}
	if err != nil && err.Error() != d.lastErr {
		d.logger.Warn("no room from the harvest driver: offering nothing", "room_file", d.roomFile, "error", err)
	}
	if err == nil && d.lastErr != "" {
		d.logger.Info("room from the harvest driver again", "room_file", d.roomFile)
	}
	d.lastErr = ""
	if err != nil {
		d.lastErr = err.Error()
	}
	if !ok {
		// the instances stay, all unhealthy: a device that vanished would
		// leave the allocations holding its instances unaccounted
		f = contract.RoomFile{CapacityCores: float64(d.count)}
	}
	ds := instances(f, ok, d.now(), d.staleAfter)
	d.count = len(ds)
	return ds
}

// Reserve gives a task its instances' IDs in its environment
// (contract.EnvRoomInstances), for the driver to report them in use.
func (d *Device) Reserve(ids []string) (*device.ContainerReservation, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range ids {
		if !d.has(id) {
			return nil, fmt.Errorf("harvest-room: no instance %q", id)
		}
	}
	return &device.ContainerReservation{Envs: map[string]string{contract.EnvRoomInstances: strings.Join(ids, ",")}}, nil
}

// has reports whether id is one of the instances last fingerprinted; d.mu
// held.
func (d *Device) has(id string) bool {
	i, err := strconv.Atoi(strings.TrimPrefix(id, contract.RoomInstancePrefix))
	return err == nil && i >= 0 && i < d.count && contract.RoomInstanceID(i) == id
}

// Stats sends nothing: an instance is a share of the node's CPU, whose use
// the driver reports.
func (d *Device) Stats(ctx context.Context, _ time.Duration) (<-chan *device.StatsResponse, error) {
	out := make(chan *device.StatsResponse)
	go func() {
		<-ctx.Done()
		close(out)
	}()
	return out, nil
}
