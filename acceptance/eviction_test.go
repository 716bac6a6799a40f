//go:build acceptance

package acceptance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// harvestJob is a batch job of count tasks of the harvest driver, each
// allocated cores of CPU, sleeping for seconds; evicted work is placed again
// elsewhere (restart attempts 0, constant reschedule).
func harvestJob(t *testing.T, id string, count int, mhz int, seconds int, constraint string) string {
	return harvestJobSpec{ID: id, Count: count, CPU: mhz, Memory: 32, Command: "/bin/sleep", Args: []string{strconv.Itoa(seconds)},
		Extra: constraint, Reschedules: 5}.file(t)
}

// harvestJobSpec is a harvested batch job (meta harvest = "true", the
// harvest driver, one task per allocation) for the tests.
type harvestJobSpec struct {
	ID                 string
	Count, CPU, Memory int // CPU in MHz, memory in MB
	Command            string
	Args               []string
	Meta, Extra        string // job meta lines; job-level stanzas such as constraints
	Reschedules        int    // attempts, 5 s apart (restarts are off)
	Driver, User       string // "harvest" unless set; the task's user ("" for none)
}

func (s harvestJobSpec) file(t *testing.T) string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = strconv.Quote(a)
	}
	return writeJob(t, fmt.Sprintf(`
job %q {
  type = "batch"
  meta {
    harvest = "true"
    %s
  }
  %s
  group "work" {
    count = %d
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts       = %d
      interval       = "1h"
      delay          = "5s"
      delay_function = "constant"
      unlimited      = false
    }
    task "work" {
      driver = %q
      %s
      config {
        command = %q
        args    = [%s]
      }
      resources {
        cpu    = %d
        memory = %d
      }
    }
  }
}`, s.ID, s.Meta, s.Extra, s.Count, s.Reschedules, s.driver(), s.userLine(), s.Command, strings.Join(args, ", "), s.CPU, s.Memory))
}

func (s harvestJobSpec) driver() string {
	if s.Driver == "" {
		return "harvest"
	}
	return s.Driver
}

func (s harvestJobSpec) userLine() string {
	if s.User == "" {
		return ""
	}
	return fmt.Sprintf("user = %q", s.User)
}

// mhzFor converts cores into the node's MHz (Nomad's CPU unit).
func mhzFor(t *testing.T, node string, cores float64) int {
	n, _, err := nomadClient(t).Nodes().Info(nodeID(t, node), nil)
	if err != nil {
		t.Fatal(err)
	}
	total, _ := strconv.Atoi(n.Attributes["cpu.totalcompute"])
	num, _ := strconv.Atoi(n.Attributes["cpu.numcores"])
	if total == 0 || num == 0 {
		t.Fatalf("node %s has no cpu attributes", node)
	}
	return int(cores * float64(total) / float64(num))
}

// evictionEvent returns the eviction message of an allocation's task and
// when it happened, if it was evicted.
func evictionEvent(a *nomadapi.Allocation) (string, time.Time, bool) {
	for _, st := range a.TaskStates {
		for _, ev := range st.Events {
			for _, m := range []string{ev.DisplayMessage, ev.Message, ev.DriverMessage} {
				if strings.HasPrefix(m, "evicted: primary tenant needs") {
					return m, time.Unix(0, ev.Time), true
				}
			}
		}
	}
	return "", time.Time{}, false
}

func allocations(t *testing.T, job string) []*nomadapi.Allocation {
	t.Helper()
	c := nomadClient(t)
	stubs, _, err := c.Jobs().Allocations(job, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*nomadapi.Allocation
	for _, s := range stubs {
		a, _, err := c.Allocations().Info(s.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// onlyOn makes every client but node ineligible until cleanup.
func onlyOn(t *testing.T, node string) (release func()) {
	c := nomadClient(t)
	var others []string
	for _, n := range cluster.NomadClients {
		if n.Name != node {
			others = append(others, nodeID(t, n.Name))
		}
	}
	set := func(eligible bool) {
		for _, id := range others {
			if _, err := c.Nodes().ToggleEligibility(id, eligible, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	set(false)
	released := false
	release = func() {
		if !released {
			released = true
			set(true)
		}
	}
	t.Cleanup(release)
	return release
}

// TestHarvestDriverEvictsYoungestFirstAndWorkMovesOn: three harvested tasks
// (three jobs, started in turn) start on client-1; a real CPU-burning process in client-1's primary
// tenant cgroup breaks the reserve; the driver evicts the youngest task
// only, with an event that says why; Nomad places that work on another
// client and the job completes. With client-1's Consul agent stopped, a
// second spike still evicts.
func TestHarvestDriverEvictsYoungestFirstAndWorkMovesOn(t *testing.T) {
	const node = "client-1"
	// capacity 2 cores, reserve 0.5: three tasks of 0.25 cores leave 1.25
	// free; a primary of 0.6 cores (rounded up to 1) leaves 0.25 < 0.5, and
	// evicting one task (0.25) restores exactly the reserve.
	// Three one-task jobs, started one after another, so that which task is
	// youngest is unambiguous (tasks of one job start within milliseconds).
	var jobs []string
	release := onlyOn(t, node)
	for i := 0; i < 3; i++ {
		job := uniqueName(fmt.Sprintf("acc-harvest%d", i))
		purgeJob(t, job)
		nomadCLI(t, "job", "run", "-detach", harvestJob(t, job, 1, mhzFor(t, node, 0.25), 45, ""))
		waitAllocs(t, job, 1, time.Minute, func(a *nomadapi.AllocationListStub) bool {
			return a.ClientStatus == nomadapi.AllocClientStatusRunning && a.NodeName == node
		})
		jobs = append(jobs, job)
		time.Sleep(500 * time.Millisecond)
	}
	release() // the evicted work may now go to other clients
	all := func() []*nomadapi.Allocation {
		var out []*nomadapi.Allocation
		for _, j := range jobs {
			out = append(out, allocations(t, j)...)
		}
		return out
	}
	youngest := allocations(t, jobs[2])[0]

	stopBurner := startBurner(t, node, 0.6)
	spike := time.Now()
	var evicted []*nomadapi.Allocation
	deadline := time.Now().Add(20 * time.Second)
	for len(evicted) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		for _, a := range all() {
			if _, _, ok := evictionEvent(a); ok {
				evicted = append(evicted, a)
			}
		}
	}
	if len(evicted) == 0 {
		t.Fatalf("no eviction within 20s of the primary's spike")
	}
	time.Sleep(3 * time.Second) // only as many as needed: nobody else goes
	evicted = evicted[:0]
	for _, a := range all() {
		if msg, at, ok := evictionEvent(a); ok {
			evicted = append(evicted, a)
			t.Logf("evicted %s on %s %.2fs after the spike: %s", a.ID[:8], a.NodeName, at.Sub(spike).Seconds(), msg)
		}
	}
	if len(evicted) != 1 || evicted[0].ID != youngest.ID {
		t.Fatalf("evicted %d allocations (want exactly the youngest, %s)", len(evicted), youngest.ID[:8])
	}
	if st := evicted[0].TaskStates["work"]; st == nil || !st.Failed {
		t.Fatalf("evicted task state %+v", st)
	}

	// The driver publishes the node's busy flag for the blob tier.
	pair, _, err := consulAPI(t, cluster.ConsulAddr()).KV().Get("harvest/busy/"+node, nil)
	if err != nil || pair == nil || !strings.Contains(string(pair.Value), `"threshold_percent":75`) {
		t.Errorf("busy flag of %s: %v %v", node, pair, err)
	}

	// Nomad places the evicted work again, on another client.
	var replacement *nomadapi.Allocation
	for deadline := time.Now().Add(60 * time.Second); replacement == nil && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		for _, a := range all() {
			if a.PreviousAllocation == youngest.ID && a.ClientStatus == nomadapi.AllocClientStatusRunning {
				replacement = a
			}
		}
	}
	if replacement == nil {
		t.Fatalf("the evicted work was not placed again")
	}
	if replacement.NodeName == node {
		t.Fatalf("the evicted work was placed back on the spiking node %s", node)
	}
	t.Logf("evicted work placed again on %s", replacement.NodeName)

	// harvestctl explains the eviction from the driver's own figures, and
	// its status shows the node's harvested work and the eviction.
	why := harvestctlOnCluster(t, "explain", "alloc", youngest.ID[:8])
	for _, want := range []string{"evicted by the harvest driver (cpu)", "cores measured", "Victims, youngest first: ",
		"(this task: 1/", "Nomad replaced it with allocation " + replacement.ID[:8]} {
		if !strings.Contains(why, want) {
			t.Errorf("harvestctl explain alloc lacks %q:\n%s", want, why)
		}
	}
	var standing []struct {
		Node           string  `json:"node"`
		HarvestedTasks int     `json:"harvested_tasks"`
		EvictionsHour  int     `json:"evictions_last_hour"`
		ReserveCores   float64 `json:"reserve_cores"`
		PrimarySource  string  `json:"primary_source"`
	}
	status := harvestctlOnCluster(t, "status", "-json")
	if err := json.Unmarshal([]byte(status), &standing); err != nil {
		t.Fatalf("harvestctl status -json: %v\n%s", err, status)
	}
	seen := false
	for _, s := range standing {
		if s.Node == node {
			seen = true
			if s.EvictionsHour < 1 || s.HarvestedTasks != 2 || s.ReserveCores <= 0 || s.PrimarySource != "driver" {
				t.Errorf("harvestctl status of %s: %+v, want the eviction, the 2 tasks still running, a reserve and the primary as the driver published it", node, s)
			}
		}
	}
	if !seen {
		t.Errorf("harvestctl status has no row for %s:\n%s", node, status)
	}

	// With client-1's Consul agent stopped, eviction still works.
	if err := cluster.Stop("consul-" + node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Restart("consul-" + node); err != nil {
			t.Errorf("restart consul agent: %v", err)
		}
	})
	startBurner(t, node, 0.9) // with the first, ~1.5 cores: rounded up to 2 even on a busy machine, so both remaining tasks must go
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		n := 0
		for _, a := range all() {
			if _, _, ok := evictionEvent(a); ok && a.NodeName == node {
				n++
			}
		}
		if n == 3 {
			break
		}
	}
	onNode := 0
	for _, a := range all() {
		if _, _, ok := evictionEvent(a); ok && a.NodeName == node {
			onNode++
		}
	}
	if onNode != 3 {
		t.Fatalf("with Consul stopped, %d of 3 tasks on %s were evicted", onNode, node)
	}
	stopBurner()

	// All the work completes elsewhere.
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		complete := 0
		for _, j := range jobs {
			summary, _, err := nomadClient(t).Jobs().Summary(j, nil)
			if err != nil {
				t.Fatal(err)
			}
			complete += summary.Summary["work"].Complete
		}
		if complete == 3 {
			return
		}
	}
	t.Fatalf("the work did not complete: %d allocations", len(all()))
}
