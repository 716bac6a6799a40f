package cluster

import (
	"context"
	"strconv"
	"sync"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
)

// coreMHzTTL is how long the least core MHz is kept before the nodes are
// read again: it changes only when a node joins or is reconfigured.
const coreMHzTTL = time.Minute

// CoreMHz is the proxy's proxy.CoreMHzSource under room_placement =
// "device" or "auto": the least driver.harvest.core_mhz among the nodes the
// harvest driver runs on (the cluster view's cached nodes), read at most
// once a coreMHzTTL. Under "auto" (RequireDevice) it is 0, and the proxy
// writes the CPU rule instead, unless every one of those nodes offers the
// harvest-room device: a task asking for the device could run nowhere else.
type CoreMHz struct {
	view View
	now  func() time.Time
	// RequireDevice: 0 unless every harvest driver's node offers the
	// harvest-room device (room_placement = "auto").
	RequireDevice bool

	mu    sync.Mutex
	value float64
	read  time.Time
}

// NewCoreMHz reads the least core MHz from view, on the clock now.
func NewCoreMHz(view View, now func() time.Time) *CoreMHz { return &CoreMHz{view: view, now: now} }

// CoreMHz is the least core MHz the harvest driver publishes, 0 if none.
func (c *CoreMHz) CoreMHz(ctx context.Context) (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.read.IsZero() && c.now().Sub(c.read) < coreMHzTTL {
		return c.value, nil
	}
	nodes, err := c.view.AllNodes(ctx)
	if err != nil {
		return 0, err
	}
	least := 0.0
	for _, n := range nodes {
		if d := n.Drivers[contract.DriverName]; d == nil || !d.Detected || n.Status != nomadapi.NodeStatusReady {
			continue // a node down or not yet ready takes no task
		}
		if c.RequireDevice && !offersRoomDevice(n) {
			least = 0
			break
		}
		if v, err := strconv.ParseFloat(n.Attributes[contract.AttrCoreMHz], 64); err == nil && v > 0 && (least == 0 || v < least) {
			least = v
		}
	}
	c.value, c.read = least, c.now()
	return least, nil
}

// offersRoomDevice says whether a node fingerprints the harvest-room device
// (its instances may all be unhealthy for now: no room, not no device).
func offersRoomDevice(n *nomadapi.Node) bool {
	if n.NodeResources == nil {
		return false
	}
	for _, d := range n.NodeResources.Devices {
		if d.Vendor+"/"+d.Type+"/"+d.Name == contract.RoomDevice {
			return true
		}
	}
	return false
}
