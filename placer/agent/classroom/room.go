package classroom

import (
	"context"
	"strconv"
	"strings"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/labels"
)

// A class's room is made of what the harvest driver publishes: its
// fingerprint (capacity and effective reserve, contract.Attr*) and its busy
// flag in Consul KV (the primary tenant's use, every 30 s).

// roomNode is one harvested node of a class as the driver on it sees it:
// what Algorithm 1's room (line 8, Headroom(J.type, c) as an amount) is
// summed from.
type roomNode struct {
	Name, Class         string
	Cores, ReserveCores float64 // the driver's capacity and effective reserve
	MHzPerCore          float64 // the driver's driver.harvest.core_mhz, else Nomad's cpu.totalcompute / cpu.numcores
	MemoryMB, ReserveMB float64
	// Primary is the primary tenant's use now from the driver's busy flag;
	// nil when the node has no recent one.
	Primary *primaryUse
	// AllocCPU (MHz) and AllocMB are what harvested allocations running or
	// pending on the node hold: never queued work, which holds nothing.
	AllocCPU, AllocMB float64
}

type primaryUse struct{ Cores, MemoryMB float64 }

// room is what the driver on n would admit for a job of type t: CPU in MHz
// by classify.ServerRoom (the primary at the level the type plans for,
// rounded up to whole cores as Section 5's NM-H does), memory as capacity -
// reserve - primary - allocated (the history has no memory series, so the
// primary's memory counts as it is now). A node without a recent report
// stands at the class's current utilisation and with no primary memory.
func (n roomNode) room(t classify.JobType, c classify.Class) (cpuMHz, memMB float64) {
	primary, primaryMB := c.Current/100*n.Cores, 0.0
	if n.Primary != nil {
		primary, primaryMB = n.Primary.Cores, n.Primary.MemoryMB
	}
	cores := classify.ServerRoom(t, c, classify.Server{Cores: n.Cores, Reserve: n.ReserveCores, Primary: primary,
		Allocated: n.AllocCPU / n.MHzPerCore})
	return cores * n.MHzPerCore, max(0, n.MemoryMB-n.ReserveMB-primaryMB-n.AllocMB)
}

// roomNodeOf reads a labelled node the harvest driver runs on, healthy; ok
// is false for any other node (it offers no room: the driver would admit
// nothing there).
func roomNodeOf(n *nomadapi.Node) (roomNode, bool) {
	class := n.Meta[labels.ClassKey]
	ready := n.Status == nomadapi.NodeStatusReady && n.SchedulingEligibility == nomadapi.NodeSchedulingEligible
	d := n.Drivers[contract.DriverName]
	if class == "" || !ready || d == nil || !d.Detected || !d.Healthy {
		return roomNode{}, false
	}
	attr := func(k string) (float64, bool) {
		v := strings.TrimSuffix(n.Attributes[k], "MiB")
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil && v != ""
	}
	r := roomNode{Name: n.Name, Class: class}
	var ok [4]bool
	r.Cores, ok[0] = attr(contract.AttrCapacityCores)
	r.ReserveCores, ok[1] = attr(contract.AttrReserveCores)
	r.MemoryMB, ok[2] = attr(contract.AttrCapacityMemory)
	r.ReserveMB, ok[3] = attr(contract.AttrReserveMemory)
	total, okT := attr("cpu.totalcompute")
	numCores, okN := attr("cpu.numcores")
	if (!okT || !okN || numCores <= 0) && n.NodeResources != nil && n.NodeResources.Cpu.TotalCpuCores > 0 {
		total, numCores, okT, okN = float64(n.NodeResources.Cpu.CpuShares), float64(n.NodeResources.Cpu.TotalCpuCores), true, true
	}
	if ok != [4]bool{true, true, true, true} || !okT || !okN || numCores <= 0 || total <= 0 || r.Cores <= 0 {
		return roomNode{}, false
	}
	r.MHzPerCore = total / numCores
	if mhz, ok := attr(contract.AttrCoreMHz); ok && mhz > 0 {
		r.MHzPerCore = mhz // the driver's own unit (a client with cpu_total_compute set)
	}
	return r, true
}

// primaries reads every node's busy flag (one Consul list) and keeps the
// recent ones, by node name.
func primaries(ctx context.Context, store *history.Store, now time.Time) (map[string]contract.BusyFlag, error) {
	docs, err := store.ListDocuments(ctx, contract.BusyDir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]contract.BusyFlag, len(docs))
	for _, d := range docs {
		var p contract.BusyFlag
		if d.Decode(&p) == nil && now.Sub(p.Updated) <= contract.BusyFlagMaxAge {
			out[strings.TrimPrefix(d.Name, contract.BusyDir)] = p
		}
	}
	return out, nil
}

// placedAllocations lists, in every namespace, the allocations that hold
// resources on a node: pending (placed, starting) or running, and meant to
// run. Work Nomad has not placed has no allocation, so it never counts.
func placedAllocations(ctx context.Context, v cluster.View) ([]*nomadapi.AllocationListStub, error) {
	allocs, err := v.Allocations(ctx)
	if err != nil {
		return nil, err
	}
	var out []*nomadapi.AllocationListStub // (the list is shared: never filtered in place)
	for _, a := range allocs {
		if a.NodeID != "" && cluster.Running(a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// cpuMHz is what an allocation holds of CPU.
func cpuMHz(a *nomadapi.AllocationListStub) float64 {
	if a.AllocatedResources == nil {
		return 0
	}
	total := 0.0
	for _, t := range a.AllocatedResources.Tasks {
		if t != nil {
			total += float64(t.Cpu.CpuShares)
		}
	}
	return total
}

// roomNodes reads the class members the driver would admit work on, with
// their primaries and their harvested allocations: one node list (nodes
// whose modify index changed are read again: meta is not in the list), one
// job list, one allocation list and one Consul list.
func roomNodes(ctx context.Context, v cluster.View, store *history.Store, now time.Time) ([]roomNode, error) {
	nodes, err := v.AllNodes(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]int{}
	var out []roomNode
	for _, n := range nodes {
		if r, ok := roomNodeOf(n); ok {
			byID[n.ID] = len(out)
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	reports, err := primaries(ctx, store, now)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if p, ok := reports[out[i].Name]; ok {
			out[i].Primary = &primaryUse{Cores: p.PrimaryCPU / 100 * out[i].Cores, MemoryMB: p.PrimaryMemory}
		}
	}
	jobs, err := v.HarvestedJobs(ctx)
	if err != nil {
		return nil, err
	}
	allocs, err := placedAllocations(ctx, v)
	if err != nil {
		return nil, err
	}
	for _, a := range allocs {
		// other allocations are the primary's to the driver: it measures
		// host use minus its own tasks'
		i, ok := byID[a.NodeID]
		if !ok || jobs[a.Namespace+"/"+a.JobID] == nil {
			continue
		}
		out[i].AllocCPU += cpuMHz(a)
		out[i].AllocMB += cluster.MemoryMB(a)
	}
	return out, nil
}
