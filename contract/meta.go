package contract

// Node meta: static meta an operator sets on each Nomad client (tenant,
// environment, rack) and dynamic meta the placer applies.
const (
	NodeTenant      = "harvest_tenant"      // the primary tenant, environment/function (operator)
	NodeEnvironment = "harvest_environment" // the tenant's environment (operator)
	NodeRack        = "harvest_rack"        // the server's rack (operator)
	NodeClass       = "harvest_class"       // the tenant's class label, e.g. periodic-2 (placer)
	NodePattern     = "harvest_pattern"     // periodic, constant or unpredictable (placer)
	Unclassified    = "unclassified"        // NodeClass and NodePattern of a tenant without a class
	NodePackTier    = "harvest_pack_tier"   // high, medium or low (container packing)
	NodeEmptySince  = "harvest_empty_since" // RFC 3339 time it last became empty of harvested work
	NodePartition   = "harvest_partition"   // PartitionShort on the short-job partition
	PartitionShort  = "short"               //
	NodeGreylisted  = "harvest_greylisted"  // GreylistedTrue while its failure count is over the threshold
	GreylistedTrue  = "true"                //
)

// Job and group meta: what a user writes (JobHarvest, GroupAfter,
// JobExpected, JobEscalateAfter) and what the admission proxy and the
// placer's policies add.
const (
	JobHarvest         = "harvest"                  // "true": the job is harvested (user)
	GroupAfter         = "harvest_after"            // group: the stages it waits for, "a, b" (user)
	JobExpected        = "harvest_expected"         // expected duration without history, e.g. "40s" (user)
	JobEscalateAfter   = "harvest_escalate_after"   // the job's own escalation delay, e.g. "10s" (user)
	JobClasses         = "harvest_classes"          // chosen classes, comma-separated
	JobType            = "harvest_job_type"         // short, medium, long
	JobEstimate        = "harvest_estimate"         // JSON of the DAG's peak
	JobReason          = "harvest_reason"           // why these classes
	JobStages          = "harvest_stages"           // JSON group -> declared count, for deferred stages
	JobPartitionReason = "harvest_partition_reason" // why the job may or may not use the short partition
	JobEscalation      = "harvest_escalation"       // the escalation step its placement is at
	JobBlockedSince    = "harvest_blocked_since"    // when its placement first blocked (RFC 3339)
)
