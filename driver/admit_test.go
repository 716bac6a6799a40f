package driver

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/driver/guard"
)

// Starts admitted one after another hold their allocations until their
// tasks are tracked: two starts of half the room in flight leave none for
// a third, which fits again once one of them is released (tracked, or
// failed to start).
func TestAdmittedStartsHoldTheirRoomUntilTracked(t *testing.T) {
	_, d, _ := newHarness(t)
	d.mu.Lock()
	room := 4 - d.reserveLocked().CPU - d.settings.hysteresis.AdmitMargin.CPU
	d.mu.Unlock()
	one := guard.Resources{CPU: room / 2, MemoryMiB: 64} // two fit, not three
	admit := func(id string) error { return d.admit(&drivers.TaskConfig{ID: id, Name: id, AllocID: id}, one) }
	for _, id := range []string{"a", "b"} {
		if err := admit(id); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
	}
	if err := admit("c"); err == nil || !strings.Contains(err.Error(), "would leave") {
		t.Fatalf("third start beside two in flight: %v, want refused", err)
	}
	d.unreserve("a")
	if err := admit("c"); err != nil {
		t.Fatalf("third start once one is released: %v", err)
	}
}
