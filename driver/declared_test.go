package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nstructs "github.com/hashicorp/nomad/nomad/structs"
	"github.com/hashicorp/nomad/plugins/drivers"

	"github.com/harvest-platform/harvest/driver/guard"
	"github.com/harvest-platform/harvest/driver/nodereport"
	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/history/declare"
	"github.com/harvest-platform/harvest/internal/syncbuf"
	"github.com/harvest-platform/harvest/kv"
	"github.com/harvest-platform/harvest/kv/kvtest"
)

var declTenant = history.TenantID{Environment: "search", Function: "frontend"}

// watch gives d a declarations watcher over a fresh in-memory KV (prefix
// "harvest/"), as SetConfig would with tenant and consul_address set. The
// test writes raw documents through mem and takes Consul away with away.
func watch(d *Driver, log hclog.Logger) (*declWatcher, *kv.Mem, *kvtest.Faulty, *history.Store) {
	mem := kv.NewMem()
	away := kvtest.NewFaulty(mem)
	store := history.NewStore(away, "harvest/")
	w := newDeclWatcher(Config{Tenant: declTenant.String()}, store, log)
	return w, mem, away, store
}

func put(t *testing.T, store *history.Store, name string, v any) {
	t.Helper()
	if err := store.PutDocument(context.Background(), name, v); err != nil {
		t.Fatal(err)
	}
}

func reserveOf(d *Driver) effectiveReserve {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reserveLocked()
}

// declDriver is an enabled driver on a node of capacity, with a fake usage
// source, logging into logs; the test sets its settings.
func declDriver(t *testing.T, capacity guard.Resources) (*Driver, hclog.Logger, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	log := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info})
	d := New(log)
	t.Cleanup(d.Shutdown)
	d.mu.Lock()
	d.config.Enabled, d.source = true, &fakeSource{capacity: capacity}
	d.mu.Unlock()
	return d, log, logs
}

func TestDeclaredReserveTenantOverPolicyOverConfigKeepsTheLastGood(t *testing.T) {
	capacity := guard.Resources{CPU: 4, MemoryMiB: 8192}
	d, log, logs := declDriver(t, capacity)
	d.mu.Lock()
	d.settings = settings{capacity: capacity, reserve: guard.Resources{CPU: 1, MemoryMiB: 512}}
	d.announced = d.reserveLocked() // as SetConfig leaves it
	d.mu.Unlock()
	w, mem, away, store := watch(d, log)
	d.reporter = nodereport.Start(context.Background(), nodereport.Options{Store: store, Tenant: declTenant, Node: "client-1",
		Capacity: capacity, Threshold: nodereport.ReserveEdge(4, 1), FollowReserve: true, Log: log})
	tenantDoc := declare.TenantDocument(declTenant)
	cores := func(v float64) *float64 { return &v }
	mib := func(v int64) *int64 { return &v }
	step := func(what string, want effectiveReserve) {
		t.Helper()
		d.refreshDeclarations(w)
		if got := reserveOf(d); got != want {
			t.Fatalf("%s: reserve %+v, want %+v", what, got, want)
		}
		fp := d.fingerprint(roomAttr{})
		if a := fp.Attributes; *a["driver.harvest.reserve_cores"].Float != want.CPU ||
			*a["driver.harvest.reserve_memory"].Int != int64(want.MemoryMiB) ||
			*a["driver.harvest.reserve_cores_source"].String != want.CPUFrom ||
			*a["driver.harvest.reserve_memory_source"].String != want.MemoryFrom {
			t.Fatalf("%s: fingerprint %v", what, a)
		}
	}
	reserve := func(cpu, mem float64, cpuFrom, memFrom string) effectiveReserve {
		return effectiveReserve{guard.Resources{CPU: cpu, MemoryMiB: mem}, cpuFrom, memFrom}
	}

	step("nothing declared", reserve(1, 512, fromConfig, fromConfig))
	put(t, store, declare.PolicyName, declare.Policy{ReserveCPU: cores(2), ReserveMemoryMB: mib(1024)})
	step("policy", reserve(2, 1024, fromPolicy, fromPolicy))
	put(t, store, tenantDoc, declare.Tenant{Environment: "search", Function: "frontend",
		TenantValues: declare.TenantValues{ReserveCPU: cores(3)}})
	step("tenant cpu over policy", reserve(3, 1024, fromTenant, fromPolicy))
	if got := d.reporter.Threshold(); got != 25 {
		t.Fatalf("busy threshold %.0f%%, want the 3-core reserve's edge, 25%%", got)
	}
	put(t, store, tenantDoc, declare.Tenant{Environment: "search", Function: "frontend",
		TenantValues: declare.TenantValues{ReserveCPU: cores(3), ReserveMemoryMB: mib(2048)}})
	step("tenant both", reserve(3, 2048, fromTenant, fromTenant))
	if n := logs.Count(`effective reserve changed: reserve_cores=3 cores_from=tenant reserve_mib=2048 memory_from=tenant`); n != 1 {
		t.Fatalf("change logged %d times:\n%s", n, logs.String())
	}

	// A corrupt or unreadable document keeps the last good reserve; each
	// different failure is logged once.
	good := reserve(3, 2048, fromTenant, fromTenant)
	mem.Put("harvest/"+tenantDoc, []byte("{"))
	step("corrupt tenant", good)
	step("corrupt tenant again", good)
	if n := logs.Count("cannot read the declared reserve"); n != 1 || logs.Count(`is corrupt: unexpected end of JSON input`) != 1 {
		t.Fatalf("corrupt document logged %d times:\n%s", n, logs.String())
	}
	mem.Put("harvest/"+tenantDoc, []byte(`{"environment":"ads","function":"frontend","reserve_cpu":0}`))
	step("another tenant's declaration", good)
	mem.Put("harvest/"+tenantDoc, []byte(`{"environment":"search","function":"frontend","reserve_cpu":-1}`))
	step("negative reserve", good)
	away.FailReads(true)
	step("Consul away", good)
	step("Consul still away", good)
	away.FailReads(false)
	put(t, store, tenantDoc, declare.Tenant{Environment: "search", Function: "frontend",
		TenantValues: declare.TenantValues{ReserveCPU: cores(3), ReserveMemoryMB: mib(2048)}})
	mem.Put("harvest/"+declare.PolicyName, []byte(`{"reserve_cpu":0,"replicas":12}`))
	step("corrupt policy", good)
	if n := logs.Count("cannot read the declared reserve"); n != 5 || w.fails.Failures != 7 {
		t.Fatalf("%d failure lines for 5 different failures, %d failed reads counted (want 7):\n%s", n, w.fails.Failures, logs.String())
	}

	// Deleting falls back: to the policy, then to the config.
	put(t, store, declare.PolicyName, declare.Policy{ReserveCPU: cores(2)})
	step("policy fixed", good)
	if logs.Count("declared reserve readable again: failed_reads=7") != 1 {
		t.Fatalf("recovery not logged:\n%s", logs.String())
	}
	if err := store.DeleteDocument(context.Background(), tenantDoc); err != nil {
		t.Fatal(err)
	}
	step("tenant deleted", reserve(2, 512, fromPolicy, fromConfig))
	if err := store.DeleteDocument(context.Background(), declare.PolicyName); err != nil {
		t.Fatal(err)
	}
	step("policy deleted", reserve(1, 512, fromConfig, fromConfig))
	if got := d.reporter.Threshold(); got != 75 {
		t.Fatalf("busy threshold %.0f%%, want the config reserve's edge again, 75%%", got)
	}
}

func TestAdmissionAndGuardKeepTheDeclaredReserve(t *testing.T) {
	h, d, _ := newHarness(t) // 4 cores, config reserve 1 core, no margin, primary idle
	w, _, _, store := watch(d, hclog.NewNullLogger())
	fps, err := d.Fingerprint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	<-fps
	declareCPU := func(cores float64) {
		t.Helper()
		put(t, store, declare.TenantDocument(declTenant), declare.Tenant{Environment: "search", Function: "frontend",
			TenantValues: declare.TenantValues{ReserveCPU: &cores}})
		d.refreshDeclarations(w)
	}

	first := task(t, h, d, "first", "/bin/sleep", "300")
	start(t, h, first) // 4 - 1 = 3 free >= 1
	declareCPU(3)
	// the fingerprint follows at once, not at the next 30 s period
	select {
	case fp := <-fps:
		if got := fp.Attributes["driver.harvest.reserve_cores"]; got == nil || *got.Float != 3 ||
			*fp.Attributes["driver.harvest.reserve_cores_source"].String != "tenant" {
			t.Fatalf("fingerprint after the declaration: %v", fp.Attributes)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no fingerprint after the reserve changed")
	}
	if dec := d.guardOnce(time.Now()); len(dec.Evict) != 0 {
		t.Fatalf("3 free for a reserve of 3 evicted %+v", dec.Evict)
	}
	// a second core would leave 2 free: enough for the config's 1, not the declared 3
	second := task(t, h, d, "second", "/bin/sleep", "300")
	_, _, err = h.StartTask(second)
	if err == nil || !nstructs.IsRecoverable(err) || !strings.Contains(err.Error(), "below the primary tenant's reserve of 3.00 cores") {
		t.Fatalf("start under the declared reserve: %v", err)
	}
	// a larger declaration evicts the running task in the guard loop
	declareCPU(3.5)
	dec := d.guardOnce(time.Now())
	if len(dec.Evict) != 1 || dec.Evict[0].Name != "first" {
		t.Fatalf("guard under a 3.5-core reserve evicted %+v, want first", dec.Evict)
	}
	if res := wait(t, h, first.ID); res.Err == nil || !strings.Contains(res.Err.Error(), "evicted") {
		t.Fatalf("first exited %+v", res)
	}
	// deleting the declaration gives the config's reserve back
	if err := store.DeleteDocument(context.Background(), declare.TenantDocument(declTenant)); err != nil {
		t.Fatal(err)
	}
	d.refreshDeclarations(w)
	if r := reserveOf(d); r.CPU != 1 || r.CPUFrom != fromConfig {
		t.Fatalf("reserve after the deletion %+v", r)
	}
	start(t, h, second)
	if st, err := h.InspectTask(second.ID); err != nil || st.State != drivers.TaskStateRunning {
		t.Fatalf("second after the deletion: %+v %v", st, err)
	}
}

// The fingerprint carries the admission margin, which the placer adds to
// the reserve when it replays a class's history for survival.
func TestFingerprintPublishesTheAdmissionMargin(t *testing.T) {
	d := New(hclog.NewNullLogger())
	defer d.Shutdown()
	capacity := guard.Resources{CPU: 16, MemoryMiB: 8192}
	d.mu.Lock()
	d.config.Enabled, d.source = true, &fakeSource{capacity: capacity}
	d.settings = settings{capacity: capacity, reserve: guard.Resources{CPU: 4, MemoryMiB: 512},
		hysteresis: guard.Hysteresis{AdmitMargin: guard.Resources{CPU: 1.5, MemoryMiB: 256}}}
	d.announced = d.reserveLocked()
	d.mu.Unlock()
	a := d.fingerprint(roomAttr{}).Attributes
	if c, m := a["driver.harvest.admit_margin_cores"], a["driver.harvest.admit_margin_memory"]; c == nil || m == nil ||
		*c.Float != 1.5 || *m.Int != 256 || m.Unit != "MiB" {
		t.Fatalf("fingerprint %v, want the 1.5-core, 256 MiB margin", a)
	}
}

// TestDeclaredReserveBelowTheFloorIsRefused: whatever the placer's
// documents say, a declared reserve under the driver's own floor is not
// taken; the next source applies, and the refusal is logged once.
func TestDeclaredReserveBelowTheFloorIsRefused(t *testing.T) {
	capacity := guard.Resources{CPU: 4, MemoryMiB: 8192}
	d, log, logs := declDriver(t, capacity)
	d.mu.Lock()
	d.settings = settings{capacity: capacity, reserve: guard.Resources{CPU: 1, MemoryMiB: 1024},
		floor: guard.Resources{CPU: 0.4, MemoryMiB: 819.2}} // the 10% default of this node
	d.announced = d.reserveLocked()
	d.mu.Unlock()
	w, _, _, store := watch(d, log)
	cores := func(v float64) *float64 { return &v }
	mib := func(v int64) *int64 { return &v }

	// the PUT /v1/policy {"reserve_cpu":0,"reserve_memory_mb":0}
	put(t, store, declare.PolicyName, declare.Policy{ReserveCPU: cores(0), ReserveMemoryMB: mib(0)})
	d.refreshDeclarations(w)
	if r := reserveOf(d); r.CPU != 1 || r.MemoryMiB != 1024 || r.CPUFrom != fromConfig || r.MemoryFrom != fromConfig {
		t.Fatalf("a zero policy reserve was taken: %+v", r)
	}
	// a tenant under the floor falls back to a policy above it
	put(t, store, declare.PolicyName, declare.Policy{ReserveCPU: cores(2), ReserveMemoryMB: mib(900)})
	put(t, store, declare.TenantDocument(declTenant), declare.Tenant{Environment: "search", Function: "frontend",
		TenantValues: declare.TenantValues{ReserveCPU: cores(0.1), ReserveMemoryMB: mib(2048)}})
	d.refreshDeclarations(w)
	d.refreshDeclarations(w)
	if r := reserveOf(d); r.CPU != 2 || r.CPUFrom != fromPolicy || r.MemoryMiB != 2048 || r.MemoryFrom != fromTenant {
		t.Fatalf("reserve %+v, want the policy's 2 cores and the tenant's 2048 MiB", r)
	}
	if n := logs.Count("tenant reserve_cpu 0.1 < floor 0.4 cores"); n != 1 {
		t.Fatalf("refusal logged %d times:\n%s", n, logs.String())
	}
	// at the floor is allowed
	put(t, store, declare.TenantDocument(declTenant), declare.Tenant{Environment: "search", Function: "frontend",
		TenantValues: declare.TenantValues{ReserveCPU: cores(0.4)}})
	d.refreshDeclarations(w)
	if r := reserveOf(d); r.CPU != 0.4 || r.CPUFrom != fromTenant {
		t.Fatalf("reserve at the floor %+v", r)
	}
}

func TestReserveFloorDefaultsToATenthOfTheNode(t *testing.T) {
	capacity := guard.Resources{CPU: 8, MemoryMiB: 4096}
	s, err := parseSettings(Config{ReserveFloorCPU: defaultReserveFloor, ReserveFloorMemory: defaultReserveFloor}, capacity)
	if err != nil || s.floor.CPU != 0.8 || s.floor.MemoryMiB != 409.6 {
		t.Fatalf("floor %+v %v", s.floor, err)
	}
	if _, err := parseSettings(Config{ReserveFloorCPU: "lots"}, capacity); err == nil || !strings.Contains(err.Error(), "reserve_floor") {
		t.Fatalf("bad floor: %v", err)
	}
}
