package roomdevice

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/plugins/base"
	"github.com/hashicorp/nomad/plugins/device"

	"github.com/harvest-platform/harvest/contract"
)

func healthyIDs(ds []*device.Device) []string {
	var out []string
	for _, d := range ds {
		if d.Healthy {
			out = append(out, d.ID)
		}
	}
	return out
}

// Nomad sees exactly the room free: the instances the tasks hold plus as
// many free ones as the harvestable cores leave over them; none when the
// room is stale, unknown or unread; a primary's rise that leaves less than
// the tasks hold offers no free instance (the held ones stay).
func TestTheHealthyInstancesAreTheRoom(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := contract.RoomFile{At: now, Known: true, CapacityCores: 12, HarvestableCores: 5.75, InUse: []string{"core-3"}}
	for name, c := range map[string]struct {
		f    contract.RoomFile
		ok   bool
		at   time.Time
		want []string
	}{
		"room":            {f, true, now, []string{"core-0", "core-1", "core-2", "core-3", "core-4"}},
		"stale":           {f, true, now.Add(11 * time.Second), nil},
		"unread":          {f, false, now, nil},
		"unknown":         {contract.RoomFile{At: now, CapacityCores: 12, HarvestableCores: 5}, true, now, nil},
		"tasks over room": {contract.RoomFile{At: now, Known: true, CapacityCores: 12, HarvestableCores: 1, InUse: []string{"core-7", "core-9"}}, true, now, []string{"core-7", "core-9"}},
		"no task":         {contract.RoomFile{At: now, Known: true, CapacityCores: 4, HarvestableCores: 9}, true, now, []string{"core-0", "core-1", "core-2", "core-3"}},
	} {
		ds := instances(c.f, c.ok, c.at, DefaultStaleAfter)
		if n := int(c.f.CapacityCores); len(ds) != n {
			t.Fatalf("%s: %d instances, want %d", name, len(ds), n)
		}
		if got := healthyIDs(ds); !slices.Equal(got, c.want) {
			t.Errorf("%s: healthy %v, want %v", name, got, c.want)
		}
	}
}

func writeRoom(t *testing.T, path string, f contract.RoomFile) {
	t.Helper()
	data, _ := json.Marshal(f)
	if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func configure(t *testing.T, d *Device, cfg map[string]any) error {
	t.Helper()
	var data []byte
	if err := base.MsgPackEncode(&data, cfg); err != nil {
		t.Fatal(err)
	}
	return d.SetConfig(&base.Config{PluginConfig: data})
}

// The plugin fingerprints the room file's instances, again when the room
// changes, and a task's reservation names its instances in its
// environment; a config without room_file or with a bad period is refused.
func TestTheDeviceFollowsTheRoomFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "room.json")
	d := New(hclog.NewNullLogger())
	if err := configure(t, d, map[string]any{"period": "1s"}); err == nil {
		t.Fatal("no room_file: want an error")
	}
	if err := configure(t, d, map[string]any{"room_file": path, "period": "-1s"}); err == nil {
		t.Fatal("a negative period: want an error")
	}
	if err := configure(t, d, map[string]any{"room_file": path, "period": "20ms"}); err != nil {
		t.Fatal(err)
	}
	writeRoom(t, path, contract.RoomFile{At: time.Now(), Known: true, CapacityCores: 3, HarvestableCores: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := func() []string {
		select {
		case fp := <-ch:
			if fp.Error != nil || len(fp.Devices) != 1 || fp.Devices[0].Vendor+"/"+fp.Devices[0].Type+"/"+fp.Devices[0].Name != contract.RoomDevice {
				t.Fatalf("fingerprint %+v", fp)
			}
			return healthyIDs(fp.Devices[0].Devices)
		case <-time.After(10 * time.Second):
			t.Fatal("no fingerprint")
		}
		return nil
	}
	if got := next(); !slices.Equal(got, []string{"core-0", "core-1"}) {
		t.Fatalf("healthy %v, want two", got)
	}
	writeRoom(t, path, contract.RoomFile{At: time.Now(), Known: true, CapacityCores: 3, HarvestableCores: 1, InUse: []string{"core-2"}})
	if got := next(); !slices.Equal(got, []string{"core-2"}) {
		t.Fatalf("after a task took core-2 with 1 harvestable: healthy %v, want core-2 alone", got)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case fp := <-ch:
		if ds := fp.Devices[0].Devices; len(ds) != 3 || len(healthyIDs(ds)) != 0 {
			t.Fatalf("a corrupt room file: %d instances, healthy %v: want the 3 kept, none healthy", len(ds), healthyIDs(ds))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no fingerprint after the room file went bad")
	}
	res, err := d.Reserve([]string{"core-0", "core-2"})
	if err != nil || res.Envs[contract.EnvRoomInstances] != "core-0,core-2" {
		t.Fatalf("reserve: %+v, %v", res, err)
	}
	if _, err := d.Reserve([]string{"core-9"}); err == nil {
		t.Fatal("reserving an instance the device does not have: want an error")
	}
}
