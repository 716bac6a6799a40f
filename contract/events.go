package contract

import "strings"

// DriverName is the harvest task driver's name in jobs (driver = "harvest").
const DriverName = "harvest"

// EvictionPrefix starts every message (task event and exit message) of a
// task the harvest driver evicted, so that an eviction is told from a
// failure even without the annotations.
const EvictionPrefix = "evicted: "

// RefusalPrefix starts the error of a start the harvest driver refused
// because the task would break the primary tenant's reserve: Nomad
// reschedules such an allocation, and it is told from a task's own
// failure by this prefix.
const RefusalPrefix = "harvest: starting this task "

// The harvest driver's fingerprint attributes (driver.harvest.*): kept
// coarse, since a changing attribute is a node update for Nomad's
// scheduler; what changes every tick goes to the busy flag instead. The
// room alone moves with the node's tasks: the driver publishes it only when
// it moved (driver/room.go).
const (
	AttrVersion             = "driver.harvest.version"
	AttrUsageSource         = "driver.harvest.usage_source"
	AttrUsagePlugin         = "driver.harvest.usage_plugin"
	AttrUsagePluginState    = "driver.harvest.usage_plugin_state"
	AttrReserveCores        = "driver.harvest.reserve_cores"
	AttrReserveCoresSource  = "driver.harvest.reserve_cores_source" // tenant, policy or config
	AttrReserveMemory       = "driver.harvest.reserve_memory"       // MiB
	AttrReserveMemorySource = "driver.harvest.reserve_memory_source"
	AttrCapacityCores       = "driver.harvest.capacity_cores"
	AttrCapacityMemory      = "driver.harvest.capacity_memory" // MiB
	AttrAdmitMarginCores    = "driver.harvest.admit_margin_cores"
	AttrAdmitMarginMemory   = "driver.harvest.admit_margin_memory" // MiB
	AttrCgroup              = "driver.harvest.cgroup"
	AttrDefaultUser         = "driver.harvest.default_user"
	// AttrCoreMHz is the MHz of Nomad's CPU unit the driver counts as one
	// core: cpu.totalcompute / cpu.numcores, or / capacity_cores where the
	// client's cpu_total_compute overrides the host's compute.
	AttrCoreMHz = "driver.harvest.core_mhz"
	// AttrRoomMHz and AttrRoomMemoryMB are the room the driver would
	// admit a task into now (after the reserve, the admission margin and
	// the primary's recent peak), in a task's units: MHz of CPU shares and
	// MB of memory. The admission proxy constrains harvested groups on them.
	AttrRoomMHz      = "driver.harvest.room_mhz"
	AttrRoomMemoryMB = "driver.harvest.room_memory_mb"
)

// The harvest driver's task event annotations (Nomad keeps them as the
// event's Details): the figures of the guard tick that suppressed or
// evicted a task, for harvestctl explain alloc.
const (
	AnnotationEvicted         = "harvest.evicted"    // "true" on the eviction event
	AnnotationSuppressed      = "harvest.suppressed" // "true" on a suppression event
	AnnotationReason          = "harvest.reason"     // cpu, memory or stale
	AnnotationVictims         = "harvest.victims"    // name@alloc, youngest first
	AnnotationVictimRank      = "harvest.victim_rank"
	AnnotationPrimaryCores    = "harvest.primary_cores" // as measured
	AnnotationPrimaryRounded  = "harvest.primary_rounded_cores"
	AnnotationPrimaryMiB      = "harvest.primary_mib"
	AnnotationReserveCores    = "harvest.reserve_cores"
	AnnotationReserveMiB      = "harvest.reserve_mib"
	AnnotationCapacityCores   = "harvest.capacity_cores"
	AnnotationCapCores        = "harvest.cap_cores"
	AnnotationNeedCores       = "harvest.need_cores"
	AnnotationTaskStarted     = "harvest.task_started"
	AnnotationSuppressedSince = "harvest.suppressed_since"
	AnnotationTrue            = "true"
)

// IsEviction says whether a task event tells of the harvest driver
// evicting the task: by its annotation, or by its message.
func IsEviction(details map[string]string, messages ...string) bool {
	if details[AnnotationEvicted] == AnnotationTrue {
		return true
	}
	for _, m := range messages {
		if strings.HasPrefix(m, EvictionPrefix) {
			return true
		}
	}
	return false
}
