//go:build acceptance

package acceptance

import (
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/contract"
)

// TestNomadPlacesNoHarvestedGroupBeyondTheDriversRoom: every client's
// driver publishes its room (driver.harvest.room_memory_mb) through Nomad,
// the proxy constrains a harvested group on it, and a group asking more
// memory than any client's room is never placed: Nomad's scheduler
// filters every client on the room rule and blocks the evaluation, and no
// start reaches a driver to be refused (without the rule Nomad, counting
// only allocations, would place it and the driver refuse it).
func TestNomadPlacesNoHarvestedGroupBeyondTheDriversRoom(t *testing.T) {
	_, proxyAddr, _ := startPlacerWith(t, "harvest/", `class_placement = "none"`, "")
	most, published := 0, 0
	for _, c := range cluster.NomadClients {
		var room string
		for deadline := time.Now().Add(time.Minute); room == "" && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			n, _, err := nomadClient(t).Nodes().Info(nodeID(t, c.Name), nil)
			if err != nil {
				t.Fatal(err)
			}
			room = n.Attributes[contract.AttrRoomMemoryMB]
		}
		mib, err := strconv.Atoi(room)
		if err != nil {
			t.Fatalf("%s publishes %s = %q", c.Name, contract.AttrRoomMemoryMB, room)
		}
		most, published = max(most, mib), published+1
	}
	ask := most + 1024 // the memory room moves by up to 128 MiB before it is published again
	job := uniqueName("acc-room")
	purgeJob(t, job)
	if out, err := nomadVia(t, proxyAddr, "job", "run", "-detach", harvestJobSpec{ID: job, Count: 1, CPU: 100, Memory: ask,
		Command: "/bin/sleep", Args: []string{"60"}}.file(t)); err != nil {
		t.Fatalf("nomad job run through the proxy: %v\n%s", err, out)
	}
	registered, _, err := nomadClient(t).Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	rule := ""
	for _, c := range registered.TaskGroups[0].Constraints {
		if c.LTarget == "${attr."+contract.AttrRoomMemoryMB+"}" {
			rule = c.LTarget + " " + c.Operand + " " + c.RTarget
		}
	}
	if rule != "${attr."+contract.AttrRoomMemoryMB+"} >= "+strconv.Itoa(ask) {
		t.Fatalf("the group's room rule is %q, want one on %s >= %d: %+v", rule, contract.AttrRoomMemoryMB, ask, registered.TaskGroups[0].Constraints)
	}
	filtered, blocked := 0, false
	for deadline := time.Now().Add(time.Minute); !(filtered > 0 && blocked) && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		evals, _, err := nomadClient(t).Jobs().Evaluations(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evals {
			blocked = blocked || e.Status == "blocked"
			if m := e.FailedTGAllocs["work"]; m != nil {
				for c, n := range m.ConstraintFiltered {
					if strings.Contains(c, contract.AttrRoomMemoryMB) {
						filtered = n
					}
				}
			}
		}
	}
	if filtered != published || !blocked {
		t.Fatalf("the room rule filtered %d of %d clients (blocked evaluation: %v), want all", filtered, published, blocked)
	}
	allocs, _, err := nomadClient(t).Jobs().Allocations(job, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 0 {
		t.Fatalf("%d allocations placed beyond every driver's room", len(allocs))
	}
	t.Logf("a group of %d MB (the largest room %d MiB) was blocked by %q on all %d clients, none placed", ask, most, rule, published)
}

// TestNomadCountsHarvestedAllocationsAgainstTheRoomDevice: with the
// harvest-room device beside every driver and the proxy's room_placement =
// "device", each harvest task asks for its cores as instances of
// harvest/room/cpu, and Nomad's scheduler counts every placed allocation
// against the instances the driver's room offers: a group of more one-core
// tasks than the clients have room for is placed up to the room, node by
// node, within one evaluation, and the rest waits in a blocked evaluation;
// no start reaches a driver to be refused. (Under the attribute rule one
// evaluation may place a whole group against one node's published room.)
func TestNomadCountsHarvestedAllocationsAgainstTheRoomDevice(t *testing.T) {
	if bareRun() {
		t.Skip("the bare run has no room device")
	}
	_, proxyAddr, _ := startPlacerWith(t, "harvest/", "class_placement = \"none\"\n  room_placement = \"device\"", "")
	offered, total, coreMHz := roomDevicesSettled(t)
	job := uniqueName("acc-room-device")
	purgeJob(t, job)
	count := total + 3
	runAskingForTheDevice(t, proxyAddr, job, count, coreMHz, "120")
	var placed, refused int
	perNode := map[string]int{}
	blocked := false
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		allocs, _, err := nomadClient(t).Jobs().Allocations(job, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		placed, refused, perNode = len(allocs), 0, map[string]int{}
		running := 0
		for _, a := range allocs {
			perNode[a.NodeID]++
			for _, ts := range a.TaskStates {
				for _, e := range ts.Events {
					if strings.Contains(e.DisplayMessage, contract.RefusalPrefix) || strings.Contains(e.DriverError, contract.RefusalPrefix) {
						refused++
					}
				}
			}
			if a.ClientStatus == "running" {
				running++
			}
		}
		evals, _, err := nomadClient(t).Jobs().Evaluations(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evals {
			blocked = blocked || e.Status == "blocked"
		}
		if running == placed && placed > 0 && blocked {
			break
		}
	}
	if refused != 0 {
		t.Fatalf("%d starts refused: Nomad placed beyond the room the device offered", refused)
	}
	if placed == 0 || placed > total || !blocked {
		t.Fatalf("%d of %d allocations placed against %d instances offered (blocked evaluation: %v): want some, at most the instances, the rest blocked", placed, count, total, blocked)
	}
	for node, n := range perNode {
		if n > offered[node] {
			t.Fatalf("node %s got %d allocations for %d instances offered", node, n, offered[node])
		}
	}
	t.Logf("%d one-core tasks: %d placed against %d instances offered (%v per node), the rest blocked, none refused", count, placed, total, offered)
}

// roomDevicesSettled waits until every client offers the harvest-room
// device's instances and returns them per node, their total and the least
// core MHz. The drivers write their room files and the devices follow
// within seconds of the cluster's start: it waits until two reads 3 s
// apart agree.
func roomDevicesSettled(t *testing.T) (offered map[string]int, total, coreMHz int) {
	t.Helper()
	read := func() (map[string]int, int, int) {
		offered, total, coreMHz := map[string]int{}, 0, 0
		for _, c := range cluster.NomadClients {
			n, _, err := nomadClient(t).Nodes().Info(nodeID(t, c.Name), nil)
			if err != nil {
				t.Fatal(err)
			}
			if mhz, err := strconv.Atoi(n.Attributes[contract.AttrCoreMHz]); err == nil && (coreMHz == 0 || mhz < coreMHz) {
				coreMHz = mhz
			}
			healthy := -1
			for _, d := range n.NodeResources.Devices {
				if d.Vendor+"/"+d.Type+"/"+d.Name == contract.RoomDevice {
					healthy = 0
					for _, inst := range d.Instances {
						if inst.Healthy {
							healthy++
						}
					}
				}
			}
			if healthy < 0 {
				return nil, 0, 0
			}
			offered[n.ID], total = healthy, total+healthy
		}
		return offered, total, coreMHz
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(3 * time.Second) {
		now, sum, mhz := read()
		if now != nil && offered != nil && maps.Equal(now, offered) && sum > 0 {
			total, coreMHz = sum, mhz
			break
		}
		offered = now
		if time.Now().After(deadline) {
			t.Fatalf("the clients' %s instances did not settle within 2 minutes: %v", contract.RoomDevice, now)
		}
	}
	if total == 0 || coreMHz == 0 {
		t.Fatalf("the clients offer %d instances in all (core MHz %d): want some", total, coreMHz)
	}
	return offered, total, coreMHz
}

// TestAutoRoomPlacementAsksForTheDeviceWhereEveryNodeOffersIt: with
// room_placement = "auto" on a cluster whose every client runs the
// harvest-room device, a harvest task asks for its cores as the device's
// instances and its group carries no CPU room rule, as under "device"
// (placer/agent/cluster's unit test covers a node without the device).
func TestAutoRoomPlacementAsksForTheDeviceWhereEveryNodeOffersIt(t *testing.T) {
	if bareRun() {
		t.Skip("the bare run has no room device")
	}
	_, _, coreMHz := roomDevicesSettled(t)
	_, proxyAddr, _ := startPlacerWith(t, "harvest/", "class_placement = \"none\"\n  room_placement = \"auto\"", "")
	job := uniqueName("acc-room-auto")
	purgeJob(t, job)
	registered := runAskingForTheDevice(t, proxyAddr, job, 1, coreMHz, "30")
	for _, c := range registered.TaskGroups[0].Constraints {
		if c.LTarget == "${attr."+contract.AttrRoomMHz+"}" {
			t.Fatalf("the group keeps the CPU room rule %v beside the device", c)
		}
	}
	waitAllocs(t, job, 1, time.Minute, isRunning)
}

// runAskingForTheDevice submits count one-core harvest tasks (coreMHz each)
// sleeping secs through the proxy at proxyAddr and checks that each asks
// for one instance of the harvest-room device; it returns the registered job.
func runAskingForTheDevice(t *testing.T, proxyAddr, job string, count, coreMHz int, secs string) *nomadapi.Job {
	t.Helper()
	if out, err := nomadVia(t, proxyAddr, "job", "run", "-detach", harvestJobSpec{ID: job, Count: count, CPU: coreMHz, Memory: 32,
		Command: "/bin/sleep", Args: []string{secs}}.file(t)); err != nil {
		t.Fatalf("nomad job run through the proxy: %v\n%s", err, out)
	}
	registered, _, err := nomadClient(t).Jobs().Info(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	if devs := registered.TaskGroups[0].Tasks[0].Resources.Devices; len(devs) != 1 || devs[0].Name != contract.RoomDevice || *devs[0].Count != 1 {
		t.Fatalf("the task asks for devices %+v, want one instance of %s", devs, contract.RoomDevice)
	}
	return registered
}
