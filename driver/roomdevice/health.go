package roomdevice

import (
	"math"
	"time"

	"github.com/hashicorp/nomad/plugins/device"

	"github.com/harvest-platform/harvest/contract"
)

// Health descriptions of the instances offered and not.
const (
	descOffered = "harvestable"
	descHeld    = "held by a harvested task"
	descBeyond  = "beyond what the primary tenant leaves"
	descStale   = "no fresh room from the harvest driver"
)

// instances are the device's instances for room file f read at now: one per
// core of the node (rounded down). Nomad's scheduler counts only healthy
// instances and, of those, the ones no live allocation holds, so the
// healthy ones are the instances the driver's tasks hold plus as many free
// ones as the room has cores left over them: Nomad then sees exactly the
// room free, in whole cores (the lowest-numbered free instances, so that the
// set moves as little as possible). A stale or unknown file offers nothing
// free: harvesting stops rather than guessing.
func instances(f contract.RoomFile, ok bool, now time.Time, staleAfter time.Duration) []*device.Device {
	n := int(math.Floor(f.CapacityCores + 1e-9))
	fresh := ok && f.Known && now.Sub(f.At) <= staleAfter
	free := 0
	held := map[string]bool{}
	if fresh {
		for _, id := range f.InUse {
			held[id] = true
		}
		inUse := 0
		for i := range n {
			if held[contract.RoomInstanceID(i)] {
				inUse++
			}
		}
		free = max(0, int(math.Floor(f.HarvestableCores+1e-9))-inUse)
	}
	out := make([]*device.Device, n)
	for i := range n {
		id := contract.RoomInstanceID(i)
		d := &device.Device{ID: id}
		switch {
		case held[id]:
			d.Healthy, d.HealthDesc = true, descHeld
		case free > 0:
			d.Healthy, d.HealthDesc = true, descOffered
			free--
		case fresh:
			d.HealthDesc = descBeyond
		default:
			d.HealthDesc = descStale
		}
		out[i] = d
	}
	return out
}

// sameHealth reports whether two instance lists offer the same instances.
func sameHealth(a, b []*device.Device) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Healthy != b[i].Healthy || a[i].HealthDesc != b[i].HealthDesc {
			return false
		}
	}
	return true
}

// healthyCount is how many of ds are healthy.
func healthyCount(ds []*device.Device) int {
	n := 0
	for _, d := range ds {
		if d.Healthy {
			n++
		}
	}
	return n
}
