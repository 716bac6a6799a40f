package driver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/driver/guard"
)

// roomOf reads the room attributes of a fingerprint (known false when
// absent).
func roomOf(fp *drivers.Fingerprint) roomAttr {
	c, m := fp.Attributes[contract.AttrRoomMHz], fp.Attributes[contract.AttrRoomMemoryMB]
	if c == nil || m == nil || c.Int == nil || m.Int == nil {
		return roomAttr{}
	}
	return roomAttr{mhz: *c.Int, mib: *m.Int, known: true}
}

// The fingerprint publishes the room admission would give a task now, in
// a task's units; a started task and a primary spike take their share out
// of it, and a new fingerprint follows when it moves.
func TestFingerprintPublishesTheRoom(t *testing.T) {
	h, d, fake := newHarness(t)
	mhzPerCore := int64(d.compute.TotalCompute) / int64(d.compute.NumCores)
	d.mu.Lock()
	margin := d.settings.hysteresis.AdmitMargin
	d.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fps, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := roomOf(<-fps)
	// 4 cores, 1 reserved, the margin, no primary yet
	want := roomAttr{mhz: int64((4 - 1 - margin.CPU) * float64(mhzPerCore)), mib: int64(4096 - margin.MemoryMiB), known: true}
	if first != want {
		t.Fatalf("first fingerprint's room %+v, want %+v", first, want)
	}

	start(t, h, task(t, h, d, "one-core", "/bin/sleep", "300"))
	next := func(what string, want roomAttr) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case fp := <-fps:
				if got := roomOf(fp); got == want {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no fingerprint with room %+v within 30s (now %+v)", what, want, d.roomNow())
			}
		}
	}
	want.mhz, want.mib = want.mhz-mhzPerCore, want.mib-64
	next("after a one-core task started", want)

	// the primary at 1.2 cores counts as 2 (rounded up, as admission does)
	fake.set(guard.Resources{CPU: 1.2, MemoryMiB: 300})
	d.guardOnce(time.Now())
	want.mhz, want.mib = want.mhz-2*mhzPerCore, want.mib-300
	next("after the primary rose", want)
	if got := d.roomNow(); got != want {
		t.Fatalf("roomNow %+v, want %+v", got, want)
	}
}

// The room is published again when the CPU room changes at all, or the
// memory room by a step: the primary's few MiB of drift would otherwise be
// a node update each.
func TestRoomMovesBySteps(t *testing.T) {
	r := roomAttr{mhz: 4000, mib: 2048, known: true}
	for _, c := range []struct {
		now  roomAttr
		want bool
	}{
		{r, false},
		{roomAttr{mhz: 4000, mib: 2048 - roomMemoryStepMiB + 1, known: true}, false},
		{roomAttr{mhz: 4000, mib: 2048 + roomMemoryStepMiB, known: true}, true},
		{roomAttr{mhz: 3999, mib: 2048, known: true}, true},
		{roomAttr{}, true},
	} {
		if got := r.moved(c.now); got != c.want {
			t.Errorf("%+v moved to %+v: %v, want %v", r, c.now, got, c.want)
		}
	}
	if (roomAttr{}).moved(roomAttr{}) {
		t.Error("an unknown room moved to an unknown room")
	}
}

// With room_file set, the driver writes its room for the harvest-room
// device: the room with no task running (Nomad counts the tasks'
// instances itself) and the instances its tasks hold, from their
// environment.
func TestTheRoomFileListsTheRoomAndTheTasksInstances(t *testing.T) {
	h, d, _ := newHarness(t)
	path := filepath.Join(t.TempDir(), "room.json")
	d.mu.Lock()
	d.config.RoomFile = path
	margin := d.settings.hysteresis.AdmitMargin
	d.mu.Unlock()
	read := func() contract.RoomFile {
		t.Helper()
		d.checkRoom()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := contract.ParseRoomFile(data)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	want := 4 - 1 - margin.CPU // 4 cores, 1 reserved, the margin, no primary
	if f := read(); !f.Known || f.CapacityCores != 4 || f.HarvestableCores != want || len(f.InUse) != 0 {
		t.Fatalf("before any task: %+v, want %v harvestable of 4", f, want)
	}
	cfg := task(t, h, d, "holder", "/bin/sleep", "300")
	cfg.Env = map[string]string{contract.EnvRoomInstances: "core-0,core-2"}
	start(t, h, cfg)
	f := read()
	if f.HarvestableCores != want || len(f.InUse) != 2 || f.InUse[0] != "core-0" || f.InUse[1] != "core-2" {
		t.Fatalf("with a task holding core-0 and core-2: %+v, want the same room and both instances in use", f)
	}
	d.mu.Lock()
	d.failSafe = true
	d.mu.Unlock()
	if f := read(); f.Known || f.HarvestableCores != 0 {
		t.Fatalf("failing safe: %+v, want nothing known", f)
	}
}
