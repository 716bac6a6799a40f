package proxy

import (
	"context"
	"math"
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
//
// With coreMHz above zero (room_placement = "device") each harvest task
// asks instead for its cores as instances of the harvest-room device
// (contract.RoomDevice: its cores if it asks for whole cores, else its MHz
// over coreMHz, rounded up), and the group gets no CPU rule: Nomad's
// scheduler then counts every placed allocation's instances against the
// room, where an attribute is read by every placement of an evaluation
// alike. The memory rule stays.
func constrainToRoom(job map[string]any, coreMHz float64) {
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
			if coreMHz > 0 {
				askRoomDevice(task, c, coreMHz)
			}
		}
		if tasks == 0 {
			continue
		}
		rules := map[string]int{RoomMemoryAttribute: memory}
		if !cores && coreMHz <= 0 {
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

// askRoomDevice sets task's ask of the room device: its whole cores, else
// cpuMHz over coreMHz rounded up (at least one), replacing an ask of the
// device already there.
func askRoomDevice(task map[string]any, cpuMHz int, coreMHz float64) {
	res, _ := task["Resources"].(map[string]any)
	if res == nil {
		res = map[string]any{}
		task["Resources"] = res
	}
	count := num(res["Cores"], 0)
	if count <= 0 {
		count = max(1, int(math.Ceil(float64(cpuMHz)/coreMHz-1e-9)))
	}
	var kept []any
	devices, _ := res["Devices"].([]any)
	for _, d := range devices {
		if ask, ok := d.(map[string]any); ok && ask["Name"] == contract.RoomDevice {
			continue
		}
		kept = append(kept, d)
	}
	res["Devices"] = append(kept, map[string]any{"Name": contract.RoomDevice, "Count": count})
}

// CoreMHzSource gives the MHz of one core of the harvest driver's nodes
// (contract.AttrCoreMHz, the least among them, so that no task asks for
// fewer instances than the driver counts cores), or 0 when none publishes
// it.
type CoreMHzSource interface {
	CoreMHz(ctx context.Context) (float64, error)
}
