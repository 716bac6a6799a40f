package proxy

import (
	"strconv"

	"github.com/harvest-platform/harvest/contract"
)

// Room targets: the harvest driver's room, as its fingerprint publishes it
// (driver/room.go).
const (
	RoomCPUAttribute    = "${attr." + contract.AttrRoomMHz + "}"
	RoomMemoryAttribute = "${attr." + contract.AttrRoomMemoryMB + "}"
)

// constrainToRoom ties every group with harvest tasks to nodes whose
// driver has room for all of them now: driver.harvest.room_mhz at least
// the tasks' CPU and driver.harvest.room_memory_mb at least their memory.
// Nomad's scheduler counts allocations against the node's fixed resources
// and not the primary tenant's use, so without the rule it keeps placing
// where the driver refuses the start. RM-H schedules against the primary's
// use the NodeManagers report in their heartbeats for the same reason
// (history-based-harvesting.txt, Section 5, "Primary tenant awareness").
// A rule on the same attribute already in the group (a job rewritten
// before, read back and sent again) is replaced, not doubled. A group
// whose tasks ask for whole cores gets no CPU rule: their MHz depend on the
// node.
func constrainToRoom(job map[string]any) {
	groups, _ := job["TaskGroups"].([]any)
	for _, g := range groups {
		group, _ := g.(map[string]any)
		if group == nil {
			continue
		}
		cpu, memory, tasks, cores := 0, 0, 0, false
		list, _ := group["Tasks"].([]any)
		for _, t := range list {
			task, _ := t.(map[string]any)
			if task == nil || str(task["Driver"], "") != contract.DriverName {
				continue
			}
			tasks++
			c, m := askOf(task)
			cpu, memory = cpu+c, memory+m
			res, _ := task["Resources"].(map[string]any)
			cores = cores || num(res["Cores"], 0) > 0
		}
		if tasks == 0 {
			continue
		}
		rules := map[string]int{RoomMemoryAttribute: memory}
		if !cores {
			rules[RoomCPUAttribute] = cpu
		}
		var kept []any
		constraints, _ := group["Constraints"].([]any)
		for _, c := range constraints {
			if rule, ok := c.(map[string]any); ok && (rule["LTarget"] == RoomCPUAttribute || rule["LTarget"] == RoomMemoryAttribute) {
				continue
			}
			kept = append(kept, c)
		}
		for _, target := range []string{RoomCPUAttribute, RoomMemoryAttribute} {
			if need, ok := rules[target]; ok {
				kept = append(kept, map[string]any{"LTarget": target, "RTarget": strconv.Itoa(need), "Operand": ">="})
			}
		}
		group["Constraints"] = kept
	}
}
