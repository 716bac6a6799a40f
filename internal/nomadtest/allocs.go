package nomadtest

import (
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// BatchTask is the list stub of one allocation of a one-task batch job in
// the default namespace, its task "work" holding cpu MHz since start; end
// zero: still running, else complete then.
func BatchTask(job string, cpu int64, start, end time.Time) *nomadapi.AllocationListStub {
	ts := &nomadapi.TaskState{State: "running", StartedAt: start}
	status := nomadapi.AllocClientStatusRunning
	if !end.IsZero() {
		ts.State, ts.FinishedAt, status = "dead", end, nomadapi.AllocClientStatusComplete
	}
	return &nomadapi.AllocationListStub{
		ID: job + "-alloc", Namespace: "default", JobID: job, JobType: nomadapi.JobTypeBatch, ClientStatus: status,
		TaskStates: map[string]*nomadapi.TaskState{"work": ts},
		AllocatedResources: &nomadapi.AllocatedResources{Tasks: map[string]*nomadapi.AllocatedTaskResources{
			"work": {Cpu: nomadapi.AllocatedCpuResources{CpuShares: cpu}}}},
	}
}
