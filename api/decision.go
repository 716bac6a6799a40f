package api

import "time"

// Decision is what the placer's admission proxy chose for a harvested job:
// it keeps the last one of each job it registered in Consul KV
// (contract.DecisionDocument), and harvestctl explain job reads it.
type Decision struct {
	At        time.Time      `json:"at"`
	Namespace string         `json:"namespace"`
	Job       string         `json:"job"`
	JobType   string         `json:"job_type"`
	Estimate  Estimate       `json:"estimate"`
	Outcome   ClassChoice    `json:"outcome"`
	Deferred  map[string]int `json:"deferred_stages,omitempty"` // stage -> count, run as stage jobs
	// Expected is the job's expected duration (its last run, or its meta),
	// when Known.
	Expected time.Duration `json:"expected"`
	Known    bool          `json:"known"`
	// Thresholds typed the job (Algorithm 1, line 3).
	Thresholds JobTypeThresholds `json:"thresholds"`
}

// Estimate is a DAG job's peak concurrent need (placer/dag): the stages
// that can run together, level by level, and what each level needs.
type Estimate struct {
	Peak   JobResources   `json:"peak"`
	Levels [][]string     `json:"levels"`
	Level  []JobResources `json:"level_resources"`
}

// JobResources is what some of a job's tasks need together.
type JobResources struct {
	CPU      int `json:"cpu_mhz"`
	MemoryMB int `json:"memory_mb"`
	Tasks    int `json:"tasks"`
}

// ClassChoice is Algorithm 1's outcome (placer/selectclass): the classes
// chosen, whether one holds the job alone ("one"), several together
// ("combined") or none ("none"), and why.
type ClassChoice struct {
	Classes []string `json:"classes"`
	Fit     string   `json:"fit"`
	Reason  string   `json:"reason"`
	// Considered is every class as lines 6 and 8 saw it, in class order.
	Considered []ConsideredClass `json:"considered,omitempty"`
}

// ConsideredClass is one class as Algorithm 1 weighed it for a job.
type ConsideredClass struct {
	Class        string  `json:"class"`
	Pattern      string  `json:"pattern"`
	RoomCPU      float64 `json:"room_cpu_mhz"`
	RoomMemoryMB float64 `json:"room_memory_mb"`
	Weight       float64 `json:"weight"`        // W[type, pattern]
	WeightedRoom float64 `json:"weighted_room"` // line 6
	Fits         bool    `json:"fits"`          // line 8: alone it holds the job's peak
}

// JobTypeThresholds are the job lengths that split short, medium and
// long jobs (placer/jobtype); JSON keys Short and Long, in nanoseconds.
type JobTypeThresholds struct {
	Short time.Duration
	Long  time.Duration
}
