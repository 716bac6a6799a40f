package driver

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"

	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
)

// The room: what admission would let start now, published in the
// fingerprint (driver.harvest.room_mhz and driver.harvest.room_memory_mb)
// so that the placer's admission proxy can constrain harvested groups to
// nodes with room for them. Nomad's scheduler counts allocations against
// the node's fixed resources and knows nothing of the primary tenant's use,
// so without it Nomad keeps placing where the driver refuses (the testbed
// measured 9 refused starts per allocation admitted at the paper's load).
// YARN-H's NodeManager reports the primary's rounded use with the
// containers' allocations in every heartbeat for the same reason
// (history-based-harvesting.txt, Section 5, "Primary tenant awareness").
const (
	// roomCheckPeriod is how often the room is compared with what the
	// fingerprint last published. Nomad's client sends node updates at
	// most every 5 s, and every change re-evaluates the node's jobs, so
	// the room is published only when it moved (roomAttr.moved).
	roomCheckPeriod = time.Second
	// roomMemoryStepMiB is how far the memory room must move before it is
	// published again: the primary's memory moves by a few MiB all the
	// time, and each publication costs Nomad a node update.
	roomMemoryStepMiB = 128
)

// roomAttr is the room in Nomad's units: MHz of CPU shares and MiB.
type roomAttr struct {
	mhz, mib int64
	known    bool // false while the driver has no core MHz or is not measuring
}

// moved reports whether now should be published over r: known or not
// changed, the CPU room changed (tasks and whole cores of the primary
// move it), or the memory room moved by roomMemoryStepMiB or more.
func (r roomAttr) moved(now roomAttr) bool {
	if r.known != now.known {
		return true
	}
	return r.known && (r.mhz != now.mhz || abs64(r.mib-now.mib) >= roomMemoryStepMiB)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// roomSnapshot is what the room check reads, under one pass of the locks:
// whether the driver measures, its core MHz and capacity, the node as
// admission sees it, and the room device's instances its tasks hold.
type roomSnapshot struct {
	measuring     bool
	mhz, capacity float64
	in            admission
	inUse         []string
}

func (d *Driver) roomSnapshot() roomSnapshot {
	d.mu.Lock()
	s := roomSnapshot{measuring: d.source != nil && !d.failSafe && d.config.Enabled, mhz: d.coreMHzLocked(), capacity: d.settings.capacity.CPU}
	d.mu.Unlock()
	d.admitMu.Lock()
	s.in = d.admissionLocked()
	for _, ids := range d.startingInstances {
		s.inUse = append(s.inUse, ids...)
	}
	d.admitMu.Unlock()
	for _, h := range d.liveTasks() {
		s.inUse = append(s.inUse, roomInstances(h.cfg)...)
	}
	return s
}

// attr is guard.Room, with the tasks admitted but not yet tracked, in
// Nomad's units, rounded down.
func (s roomSnapshot) attr() roomAttr {
	if s.mhz <= 0 || !s.measuring {
		return roomAttr{}
	}
	r := guard.Room(s.in.state, s.in.peak, s.in.hysteresis)
	return roomAttr{mhz: int64(math.Floor(r.CPU*s.mhz + 1e-6)), mib: int64(math.Floor(r.MemoryMiB + 1e-6)), known: true}
}

// roomNow is the room now.
func (d *Driver) roomNow() roomAttr { return d.roomSnapshot().attr() }

// checkRoom is the room check of every roomCheckPeriod: the room now, the
// room file written from the same snapshot.
func (d *Driver) checkRoom() roomAttr {
	s := d.roomSnapshot()
	d.writeRoomFile(s.file(time.Now()))
	return s.attr()
}

// addTo writes the room's attributes into a fingerprint's.
func (r roomAttr) addTo(attrs map[string]*pstructs.Attribute) {
	if !r.known {
		return
	}
	attrs[contract.AttrRoomMHz] = pstructs.NewIntAttribute(r.mhz, "")
	attrs[contract.AttrRoomMemoryMB] = pstructs.NewIntAttribute(r.mib, "")
}

// The room file (room_file): what the driver could harvest now, for the
// harvest-room device plugin on this client (driver/roomdevice), which
// serves it to Nomad's scheduler as instances of contract.RoomDevice that
// the proxy asks each harvest task for. It is the room with no harvested
// task running (Nomad subtracts the allocations' instances itself) and the
// instances the driver's tasks hold, rewritten every roomCheckPeriod so
// that the device can tell a live driver from a stopped one.

// roomInstances are the room device's instances Nomad gave a task (the
// device's reservation sets them in its environment); none if it asked
// for none.
func roomInstances(cfg *drivers.TaskConfig) []string {
	v := cfg.Env[contract.EnvRoomInstances]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// file is the room file's content at now: the room with no task running.
func (s roomSnapshot) file(now time.Time) contract.RoomFile {
	f := contract.RoomFile{At: now, Known: s.measuring, CapacityCores: s.capacity, InUse: s.inUse}
	if s.measuring {
		in := s.in.state
		in.Tasks = nil
		f.HarvestableCores = guard.Room(in, s.in.peak, s.in.hysteresis).CPU
	}
	return f
}

// writeRoomFile writes the room file, whole or not at all (a temporary
// file renamed over it), if the config names one; a failure is logged once
// until a write succeeds again.
func (d *Driver) writeRoomFile(f contract.RoomFile) {
	d.mu.Lock()
	path := d.config.RoomFile
	d.mu.Unlock()
	if path == "" {
		return
	}
	data, err := json.Marshal(f)
	if err == nil {
		tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
		if err = os.WriteFile(tmp, data, 0o644); err == nil {
			err = os.Rename(tmp, path)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil && !d.roomFileFailing {
		d.logger.Error("writing the room file: the harvest-room device will offer nothing", "room_file", path, "error", err)
	}
	d.roomFileFailing = err != nil
}
