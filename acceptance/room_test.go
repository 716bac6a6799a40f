//go:build acceptance

package acceptance

import (
	"strconv"
	"strings"
	"testing"
	"time"

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
