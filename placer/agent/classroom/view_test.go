package classroom

import (
	"context"
	"sync"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/api"
	"github.com/harvest-platform/harvest/contract"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/internal/nomadtest"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/placer/agent/classes"
	"github.com/harvest-platform/harvest/placer/agent/cluster"
	"github.com/harvest-platform/harvest/placer/classify"
	"github.com/harvest-platform/harvest/placer/selectclass"
)

// harvestNode is a 12-core node at 1000 MHz per core with 48 GiB, its
// harvest driver keeping 4 cores and 10 GiB for the primary (the paper's
// testbed, history-based-harvesting.txt Section 6: 4 cores, 33%).
func harvestNode(id, class string) *nomadapi.Node {
	return &nomadapi.Node{ID: id, Name: id, Status: "ready", SchedulingEligibility: "eligible", ModifyIndex: 1,
		Meta: map[string]string{"harvest_tenant": "t/" + id, "harvest_class": class},
		Attributes: map[string]string{"cpu.totalcompute": "12000", "cpu.numcores": "12",
			contract.AttrCapacityCores: "12", contract.AttrReserveCores: "4", contract.AttrCapacityMemory: "49152MiB", contract.AttrReserveMemory: "10240MiB"},
		Drivers: map[string]*nomadapi.DriverInfo{contract.DriverName: {Detected: true, Healthy: true}}}
}

// job is a job in the default namespace with meta.
func job(id string, meta map[string]string) *nomadapi.Job {
	ns := "default"
	return &nomadapi.Job{ID: &id, Name: &id, Namespace: &ns, Meta: meta}
}

func alloc(node, job, status string, mhz, mb int64) *nomadapi.AllocationListStub {
	return &nomadapi.AllocationListStub{NodeID: node, Namespace: "default", JobID: job, DesiredStatus: "run", ClientStatus: status,
		AllocatedResources: &nomadapi.AllocatedResources{Tasks: map[string]*nomadapi.AllocatedTaskResources{
			"t": {Cpu: nomadapi.AllocatedCpuResources{CpuShares: mhz}, Memory: nomadapi.AllocatedMemoryResources{MemoryMB: mb}}}}}
}

type roomFixture struct {
	fake  *nomadtest.ScaleNomad
	store *history.Store
	view  *View
	now   time.Time
}

func newRoomFixture(t *testing.T, table []classify.Class, nodes ...*nomadapi.Node) *roomFixture {
	t.Helper()
	f := &roomFixture{fake: nomadtest.NewScaleNomad(0, 0), store: history.NewStore(kv.NewMem(), "harvest/"),
		now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	f.fake.Nodes = nodes
	client := f.fake.Serve(t)
	stored := api.ClassTable{}
	for _, c := range table {
		stored.Classes = append(stored.Classes, classes.WireClass(c))
	}
	if err := f.store.PutDocument(context.Background(), contract.ClassesDocument, stored); err != nil {
		t.Fatal(err)
	}
	f.view = New(f.store, cluster.New(client), time.Minute, func() time.Time { return f.now })
	return f
}

// primary publishes a node's busy flag as its driver does.
func (f *roomFixture) primary(t *testing.T, node string, cpuPercent, memMiB float64, at time.Time) {
	t.Helper()
	flag := map[string]any{"busy": false, "primary_cpu_percent": cpuPercent, "primary_memory_mib": memMiB, "updated": at}
	if err := f.store.PutDocument(context.Background(), "busy/"+node, flag); err != nil {
		t.Fatal(err)
	}
}

func (f *roomFixture) room(t *testing.T, jobType string) map[string]selectclass.Candidate {
	t.Helper()
	cands, err := f.view.Candidates(context.Background(), jobType)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]selectclass.Candidate{}
	for _, c := range cands {
		out[c.Class] = c
	}
	return out
}

// A class that peaks at 70% of 12-core servers with a 4-core reserve has
// no room for a long job, whatever its size: at its peak the primary holds
// 9 whole cores and the reserve 4 (issue 17). A short job plans for the
// primary as it is now.
func TestClassRoomAtThePeakHonoursTheReserve(t *testing.T) {
	c := classify.Class{Name: "constant-1", Pattern: classify.Constant, Average: 50, Peak: 70, Current: 30}
	f := newRoomFixture(t, []classify.Class{c}, harvestNode("n1", "constant-1"), harvestNode("n2", "constant-1"))
	f.primary(t, "n1", 25, 8192, f.now.Add(-10*time.Second)) // 3 cores -> 3
	f.primary(t, "n2", 30, 8192, f.now.Add(-10*time.Second)) // 3.6 cores -> 4
	if r := f.room(t, "long")["constant-1"]; r.RoomCPU != 0 {
		t.Fatalf("long room %.0f MHz at a 70%% peak with a 4-core reserve, want 0", r.RoomCPU)
	}
	short := f.room(t, "short")["constant-1"]
	if short.RoomCPU != 5000+4000 || short.RoomMemoryMB != 2*(49152-10240-8192) {
		t.Fatalf("short room %.0f MHz %.0f MB, want 9000 MHz and %d MB", short.RoomCPU, short.RoomMemoryMB, 2*(49152-10240-8192))
	}
	// medium: the 50% average is 6 cores, above both primaries: 12-6-4 = 2 each
	if r := f.room(t, "medium")["constant-1"]; r.RoomCPU != 4000 {
		t.Fatalf("medium room %.0f MHz, want 4000", r.RoomCPU)
	}
}

// Harvested allocations running or pending on a node reduce its room;
// finished ones, other jobs' (the primary's to the driver) and work not
// placed do not.
func TestClassRoomCountsAllocatedWorkOnly(t *testing.T) {
	c := classify.Class{Name: "unpredictable-1", Pattern: classify.Unpredictable, Average: 20, Peak: 90, Current: 10}
	f := newRoomFixture(t, []classify.Class{c}, harvestNode("n1", "unpredictable-1"))
	f.primary(t, "n1", 0, 0, f.now)
	f.fake.Jobs = []*nomadapi.Job{
		job("etl", map[string]string{"harvest_job_type": "short"}),
		job("queued", map[string]string{"harvest_job_type": "short"}), // blocked: no allocation
		job("web", nil),
	}
	f.fake.Allocs = []*nomadapi.AllocationListStub{
		alloc("n1", "etl", "running", 2000, 4096),
		alloc("n1", "etl", "pending", 500, 1024),
		alloc("n1", "etl", "complete", 3000, 3000),
		alloc("n1", "web", "running", 4000, 4096),
	}
	r := f.room(t, "short")["unpredictable-1"]
	// 12 - 0 - 4 reserve = 8 cores; minus 2.5 cores allocated
	if r.RoomCPU != 8000-2500 || r.RoomMemoryMB != 49152-10240-4096-1024 {
		t.Fatalf("room %.0f MHz %.0f MB, want 5500 MHz and %d MB", r.RoomCPU, r.RoomMemoryMB, 49152-10240-4096-1024)
	}
}

// A node the harvest driver does not run on (or runs unhealthy on) offers
// no room; a node without a recent busy flag stands at its class's current
// utilisation.
func TestClassRoomNeedsTheDriverAndFallsBackToTheClass(t *testing.T) {
	c := classify.Class{Name: "periodic-1", Pattern: classify.Periodic, Average: 40, Peak: 80, Current: 50}
	bare := harvestNode("bare", "periodic-1")
	bare.Attributes = map[string]string{"cpu.totalcompute": "12000", "cpu.numcores": "12"}
	bare.Drivers = nil
	sick := harvestNode("sick", "periodic-1")
	sick.Drivers[contract.DriverName].Healthy = false
	stale := harvestNode("stale", "periodic-1")
	f := newRoomFixture(t, []classify.Class{c}, bare, sick, stale)
	f.primary(t, "bare", 0, 0, f.now)
	f.primary(t, "sick", 0, 0, f.now)
	f.primary(t, "stale", 0, 0, f.now.Add(-10*time.Minute)) // ignored: the class's 50% = 6 cores
	if r := f.room(t, "short")["periodic-1"]; r.RoomCPU != 2000 || r.RoomMemoryMB != 49152-10240 {
		t.Fatalf("room %.0f MHz %.0f MB, want only the stale node's 2000 MHz and %d MB", r.RoomCPU, r.RoomMemoryMB, 49152-10240)
	}
}

// The view is cached: a burst of submissions, even concurrent ones, costs
// one read of Nomad.
func TestClassViewIsCached(t *testing.T) {
	c := classify.Class{Name: "constant-1", Pattern: classify.Constant, Average: 10, Peak: 20, Current: 10}
	f := newRoomFixture(t, []classify.Class{c}, harvestNode("n1", "constant-1"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.view.Candidates(context.Background(), "long"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	first := f.fake.Total()
	f.room(t, "short")
	if now := f.fake.Total(); first != 4 || now != first { // nodes, node n1, jobs, allocations
		t.Fatalf("%d Nomad requests for a burst of 8, then %d more, want 4 and 0", first, now-first)
	}
}

// On a client whose cpu_total_compute stands for more cores than the host
// has (the testbed's 12 cores on 2), a core is the driver's published
// driver.harvest.core_mhz, not the total over the host's cores.
func TestRoomCountsACoreAtTheDriversMHz(t *testing.T) {
	n := harvestNode("n", "constant-1")
	n.Attributes["cpu.numcores"] = "2"
	n.Attributes[contract.AttrCoreMHz] = "1000"
	r, ok := roomNodeOf(n)
	if !ok || r.MHzPerCore != 1000 {
		t.Fatalf("room node %+v (%v), want 1000 MHz per core", r, ok)
	}
	delete(n.Attributes, contract.AttrCoreMHz)
	if r, _ := roomNodeOf(n); r.MHzPerCore != 6000 {
		t.Fatalf("without the driver's figure: %v MHz per core, want Nomad's 12000/2", r.MHzPerCore)
	}
}
