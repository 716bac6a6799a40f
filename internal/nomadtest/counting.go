package nomadtest

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
)

// CountingNomad is a Nomad API serving a node list, node reads (counted)
// and dynamic meta applies (recorded; each bumps the node's modify index).
// A test holds Mu while it changes the fields of a served fake.
type CountingNomad struct {
	Mu    sync.Mutex
	Index map[string]uint64
	// Meta is each node's meta (nil: nodes n1 and n2 of tenants t/n1 and
	// t/n2); Down nodes have status down.
	Meta    map[string]map[string]string
	Down    map[string]bool
	reads   int
	Applied []nomadapi.NodeMetaApplyRequest
	// CoreMHz is the driver.harvest.core_mhz of the nodes the harvest
	// driver runs on (none: no node has the driver)
	CoreMHz map[string]string
	// RoomDevice are the nodes that offer the harvest-room device (one
	// healthy instance)
	RoomDevice map[string]bool
}

func (f *CountingNomad) ids() []string {
	if f.Meta == nil {
		return []string{"n1", "n2"}
	}
	return slices.Sorted(maps.Keys(f.Meta))
}

// ServeHTTP answers Nomad's node list, node reads and meta applies.
func (f *CountingNomad) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	switch {
	case r.URL.Path == "/v1/nodes":
		var stubs []nomadapi.NodeListStub
		for _, id := range f.ids() {
			stubs = append(stubs, nomadapi.NodeListStub{ID: id, Name: id, ModifyIndex: f.Index[id]})
		}
		json.NewEncoder(w).Encode(stubs)
	case strings.HasPrefix(r.URL.Path, "/v1/node/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/node/")
		f.reads++
		meta, status := map[string]string{"harvest_tenant": "t/" + id}, "ready"
		if f.Meta != nil {
			meta = maps.Clone(f.Meta[id])
		}
		if f.Down[id] {
			status = "down"
		}
		node := nomadapi.Node{ID: id, Name: id, ModifyIndex: f.Index[id], Status: status, SchedulingEligibility: "eligible", Meta: meta}
		if mhz, ok := f.CoreMHz[id]; ok {
			node.Attributes = map[string]string{contract.AttrCoreMHz: mhz}
			node.Drivers = map[string]*nomadapi.DriverInfo{contract.DriverName: {Detected: true, Healthy: true}}
		}
		if f.RoomDevice[id] {
			node.NodeResources = &nomadapi.NodeResources{Devices: []*nomadapi.NodeDeviceResource{{Vendor: contract.RoomDeviceVendor,
				Type: contract.RoomDeviceType, Name: contract.RoomDeviceName, Instances: []*nomadapi.NodeDevice{{ID: "0", Healthy: true}}}}}
		}
		json.NewEncoder(w).Encode(node)
	case r.URL.Path == "/v1/client/metadata" && r.Method == http.MethodPost:
		var req nomadapi.NodeMetaApplyRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || f.Meta[req.NodeID] == nil || f.Down[req.NodeID] {
			http.Error(w, "bad meta apply", http.StatusBadRequest)
			return
		}
		for k, v := range req.Meta {
			if v == nil {
				delete(f.Meta[req.NodeID], k)
			} else {
				f.Meta[req.NodeID][k] = *v
			}
		}
		f.Index[req.NodeID]++
		f.Applied = append(f.Applied, req)
		json.NewEncoder(w).Encode(nomadapi.NodeMetaResponse{Meta: f.Meta[req.NodeID]})
	default:
		http.NotFound(w, r)
	}
}

// NodeReads is how many nodes were read one by one.
func (f *CountingNomad) NodeReads() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.reads
}
