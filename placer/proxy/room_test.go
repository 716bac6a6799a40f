package proxy

import (
	"encoding/json"
	"strconv"
	"testing"
)

// Each group with harvest tasks is tied to nodes whose driver publishes
// room for all of its harvest tasks; tasks of other drivers do not count,
// a group of whole cores gets no CPU rule, and a job sent again keeps one
// rule per attribute.
func TestGroupsAreConstrainedToTheDriversRoom(t *testing.T) {
	var job map[string]any
	if err := json.Unmarshal([]byte(`{"TaskGroups": [
	  {"Name": "map", "Constraints": [{"LTarget": "${attr.kernel.name}", "RTarget": "linux", "Operand": "="}],
	   "Tasks": [{"Driver": "harvest", "Resources": {"CPU": 500, "MemoryMB": 256}},
	             {"Driver": "harvest"},
	             {"Driver": "docker", "Resources": {"CPU": 4000, "MemoryMB": 4096}}]},
	  {"Name": "cores", "Tasks": [{"Driver": "harvest", "Resources": {"Cores": 2, "MemoryMB": 1024}}]},
	  {"Name": "other", "Tasks": [{"Driver": "raw_exec", "Resources": {"CPU": 100}}]}]}`), &job); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second pass is a rewritten job sent again
		constrainToRoom(job, 0)
	}
	rules := func(group int) map[string]string {
		out := map[string]string{}
		cs, _ := job["TaskGroups"].([]any)[group].(map[string]any)["Constraints"].([]any)
		for _, c := range cs {
			rule := c.(map[string]any)
			if rule["LTarget"] == RoomCPUAttribute || rule["LTarget"] == RoomMemoryAttribute {
				if rule["Operand"] != ">=" {
					t.Errorf("group %d: %v", group, rule)
				}
				if _, twice := out[rule["LTarget"].(string)]; twice {
					t.Errorf("group %d: %s twice", group, rule["LTarget"])
				}
				out[rule["LTarget"].(string)] = rule["RTarget"].(string)
			}
		}
		out["all"] = strconv.Itoa(len(cs))
		return out
	}
	if got := rules(0); got[RoomCPUAttribute] != "600" || got[RoomMemoryAttribute] != "556" || got["all"] != "3" {
		t.Errorf("map: %v, want CPU >= 600 (500 + Nomad's default 100), memory >= 556, and the user's rule kept", got)
	}
	if got := rules(1); got[RoomCPUAttribute] != "" || got[RoomMemoryAttribute] != "1024" {
		t.Errorf("cores: %v, want no CPU rule and memory >= 1024", got)
	}
	if got := rules(2); got["all"] != "0" {
		t.Errorf("a group without harvest tasks got %v", got)
	}
}

// Under room_placement = "device" every harvest task asks for its cores in
// instances of the room device (its MHz over the core's, rounded up; its
// whole cores as they are), once however often the job is sent, and the
// group keeps the memory rule but no CPU rule; tasks of other drivers ask
// for nothing.
func TestHarvestTasksAskForTheRoomDevice(t *testing.T) {
	var job map[string]any
	if err := json.Unmarshal([]byte(`{"TaskGroups": [
	  {"Name": "map", "Tasks": [{"Driver": "harvest", "Resources": {"CPU": 2095, "MemoryMB": 32}},
	                            {"Driver": "harvest", "Resources": {"CPU": 2500, "MemoryMB": 32,
	                              "Devices": [{"Name": "nvidia/gpu", "Count": 1}]}},
	                            {"Driver": "harvest", "Resources": {"Cores": 3}},
	                            {"Driver": "docker", "Resources": {"CPU": 4000}}]}]}`), &job); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		constrainToRoom(job, 2095)
	}
	group := job["TaskGroups"].([]any)[0].(map[string]any)
	asks := func(task int) map[string]int {
		out := map[string]int{}
		res, _ := group["Tasks"].([]any)[task].(map[string]any)["Resources"].(map[string]any)
		devices, _ := res["Devices"].([]any)
		for _, d := range devices {
			ask := d.(map[string]any)
			out[ask["Name"].(string)] += num(ask["Count"], 0)
		}
		return out
	}
	for task, want := range []map[string]int{{"harvest/room/cpu": 1}, {"harvest/room/cpu": 2, "nvidia/gpu": 1}, {"harvest/room/cpu": 3}, {}} {
		if got := asks(task); len(got) != len(want) || got["harvest/room/cpu"] != want["harvest/room/cpu"] || got["nvidia/gpu"] != want["nvidia/gpu"] {
			t.Errorf("task %d asks %v, want %v", task, got, want)
		}
	}
	var targets []string
	for _, c := range group["Constraints"].([]any) {
		targets = append(targets, c.(map[string]any)["LTarget"].(string))
	}
	if len(targets) != 1 || targets[0] != RoomMemoryAttribute {
		t.Errorf("rules on %v, want the memory rule alone", targets)
	}
}
