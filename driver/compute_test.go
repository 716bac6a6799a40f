package driver

import (
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/client/lib/cpustats"
	"github.com/hashicorp/nomad/client/lib/numalib/hw"
	nstructs "github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
)

// askCores is the cores the driver counts a task of mhz CPU shares as.
func askCores(d *Driver, mhz int64) float64 {
	return d.allocOf(&drivers.TaskConfig{Resources: &drivers.Resources{NomadResources: &nstructs.AllocatedTaskResources{
		Cpu: nstructs.AllocatedCpuResources{CpuShares: mhz}}}}).CPU
}

// TestCPUSharesCountAtTheNodesMHzPerCore: a task's MHz count at Nomad's
// MHz per core, unless the client's cpu_total_compute stands for a node of
// the driver's capacity: then a core is that total over the capacity.
func TestCPUSharesCountAtTheNodesMHzPerCore(t *testing.T) {
	d := New(hclog.NewNullLogger())
	defer d.Shutdown()
	d.mu.Lock()
	d.config.Enabled, d.source = true, &fakeSource{}
	d.compute, d.settings.capacity = cpustats.Compute{TotalCompute: 4000, NumCores: 2}, guard.Resources{CPU: 4, MemoryMiB: 4096}
	d.mu.Unlock()
	// the fingerprinted compute: 2000 MHz a core, whatever the capacity
	if got := askCores(d, 2000); got != 1 {
		t.Errorf("fingerprinted: 2000 MHz = %v cores, want 1", got)
	}
	// cpu_total_compute of 12 cores at 2000 MHz on this 2-core host, a
	// 12-core capacity: 2000 MHz is still a core, not a sixth of one
	d.mu.Lock()
	d.compute, d.cpuOverride, d.settings.capacity.CPU = cpustats.Compute{TotalCompute: 24000, NumCores: 2}, true, 12
	d.mu.Unlock()
	if got := askCores(d, 2000); got != 1 {
		t.Errorf("overridden: 2000 MHz = %v cores, want 1", got)
	}
	if got := askCores(d, 3000); got != 1.5 {
		t.Errorf("overridden: 3000 MHz = %v cores, want 1.5", got)
	}
	if a := d.fingerprint(roomAttr{}).Attributes[contract.AttrCoreMHz]; a == nil || *a.Float != 2000 {
		t.Errorf("fingerprint %s = %v, want 2000", contract.AttrCoreMHz, a)
	}
	// no capacity known: Nomad's cores, as before
	d.mu.Lock()
	d.settings.capacity.CPU = 0
	d.mu.Unlock()
	if got := askCores(d, 12000); got != 1 {
		t.Errorf("no capacity: 12000 MHz = %v cores, want 1", got)
	}
	// no compute yet: nothing to count by
	d.mu.Lock()
	d.compute = cpustats.Compute{}
	d.mu.Unlock()
	if got := askCores(d, 2000); got != 0 {
		t.Errorf("no compute: %v cores", got)
	}
}

// TestSetConfigTellsAnOverriddenCompute: the client's cpu_total_compute
// reaches the driver in the topology Nomad sends it.
func TestSetConfigTellsAnOverriddenCompute(t *testing.T) {
	d := New(hclog.NewNullLogger())
	defer d.Shutdown()
	var raw []byte
	if err := base.MsgPackEncode(&raw, &Config{Enabled: false, UsageSource: "proc", HarvestCgroup: "none"}); err != nil {
		t.Fatal(err)
	}
	for _, override := range []hw.MHz{0, 3 * topology.TotalCompute()} {
		top := *topology
		top.OverrideTotalCompute = override
		if err := d.SetConfig(&base.Config{PluginConfig: raw, AgentConfig: &base.AgentConfig{Driver: &base.ClientDriverConfig{Topology: &top}}}); err != nil {
			t.Fatal(err)
		}
		d.mu.Lock()
		perCore, capacity := d.coreMHzLocked(), d.settings.capacity.CPU
		d.mu.Unlock()
		want := float64(topology.TotalCompute()) / float64(topology.NumCores())
		if override > 0 {
			want = float64(override) / capacity // the proc source's capacity: the host's cores
		}
		if perCore != want {
			t.Errorf("override %d: %v MHz a core, want %v", override, perCore, want)
		}
	}
}
