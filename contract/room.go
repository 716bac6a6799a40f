package contract

import (
	"encoding/json"
	"fmt"
	"time"
)

// The room device: the harvest driver's room in Nomad's own resource
// accounting. The driver writes what it could harvest now into a room file
// (RoomFile); the harvest-room device plugin on the same client serves it
// as instances of the device RoomDevice, one per core, healthy as many as
// the driver could harvest; the admission proxy asks every harvest task for
// as many instances as it has cores. Nomad's scheduler then counts each
// placed allocation's instances, within one evaluation and across them,
// before the task starts: a published attribute (AttrRoomMHz) cannot be
// consumed, so one evaluation placed a whole group against one node's room
// (the testbed counted 88% of its refused starts there).
const (
	// RoomDevicePlugin is the device plugin's name in a Nomad client's
	// plugin block (and its binary's in plugin_dir).
	RoomDevicePlugin = "harvest-room"
	RoomDeviceVendor = "harvest"
	RoomDeviceType   = "room"
	RoomDeviceName   = "cpu"
	// RoomDevice is the name a task's device block asks for.
	RoomDevice = RoomDeviceVendor + "/" + RoomDeviceType + "/" + RoomDeviceName
	// EnvRoomInstances is the task environment variable the device's
	// reservation sets: the task's instance IDs, comma-separated, which
	// the driver reports back as in use.
	EnvRoomInstances = "HARVEST_ROOM_INSTANCES"
)

// RoomInstancePrefix starts every instance ID of the room device.
const RoomInstancePrefix = "core-"

// RoomInstanceID is the i-th instance of the room device.
func RoomInstanceID(i int) string { return fmt.Sprintf("%s%d", RoomInstancePrefix, i) }

// RoomFile is the document the driver writes for the room device.
type RoomFile struct {
	// At is when the driver last wrote it; a file older than the device's
	// stale_after offers nothing (stop harvesting rather than guess).
	At time.Time `json:"at"`
	// Known is false while the driver is not measuring (disabled, fail
	// safe, no usage source): nothing is offered then.
	Known bool `json:"known"`
	// CapacityCores is the node's cores to the driver: the device has
	// that many instances (rounded down).
	CapacityCores float64 `json:"capacity_cores"`
	// HarvestableCores is the room with no harvested task running: what
	// is free with the primary at its recent peak, less the reserve and
	// the margin. Nomad subtracts the allocations' instances itself.
	HarvestableCores float64 `json:"harvestable_cores"`
	// InUse are the instances the driver's running and starting tasks
	// hold (their EnvRoomInstances).
	InUse []string `json:"in_use"`
}

// ParseRoomFile reads a room file's content.
func ParseRoomFile(data []byte) (RoomFile, error) {
	var f RoomFile
	if err := json.Unmarshal(data, &f); err != nil {
		return RoomFile{}, fmt.Errorf("room file: %w", err)
	}
	if f.At.IsZero() || f.CapacityCores < 0 || f.HarvestableCores < 0 {
		return RoomFile{}, fmt.Errorf("room file: at %v, capacity %v, harvestable %v: want a time and no negative cores", f.At, f.CapacityCores, f.HarvestableCores)
	}
	return f, nil
}
