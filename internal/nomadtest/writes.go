package nomadtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	nomadapi "github.com/hashicorp/nomad/api"
)

// register takes a job registration (f.Mu held).
func (f *ScaleNomad) register(w http.ResponseWriter, r *http.Request, reply func(any, uint64)) {
	var req nomadapi.JobRegisterRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Job == nil || req.Job.ID == nil {
		http.Error(w, fmt.Sprintf("bad job registration: %v", err), http.StatusBadRequest)
		return
	}
	idx := f.Bump("jobs")
	req.Job.JobModifyIndex, req.Job.ModifyIndex = &idx, &idx
	f.Registered = append(f.Registered, req.Job)
	f.JobWrites = append(f.JobWrites, "register "+*req.Job.ID)
	replaced := false
	for i, j := range f.Jobs {
		if *j.ID == *req.Job.ID {
			f.Jobs[i], replaced = req.Job, true
		}
	}
	if !replaced {
		f.Jobs = append(f.Jobs, req.Job)
	}
	reply(nomadapi.JobRegisterResponse{JobModifyIndex: idx}, idx)
}

// plan answers a job's plan with PlanUpdates, changing nothing (f.Mu held).
func (f *ScaleNomad) plan(w http.ResponseWriter, r *http.Request, reply func(any, uint64)) {
	var req nomadapi.JobPlanRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Job == nil || req.Job.ID == nil {
		http.Error(w, fmt.Sprintf("bad job plan: %v", err), http.StatusBadRequest)
		return
	}
	reply(nomadapi.JobPlanResponse{Annotations: &nomadapi.PlanAnnotations{DesiredTGUpdates: f.PlanUpdates[*req.Job.ID]}}, f.index)
}

// nodeWrite takes a node's drain or eligibility update (f.Mu held).
func (f *ScaleNomad) nodeWrite(w http.ResponseWriter, r *http.Request, reply func(any, uint64)) {
	var node *nomadapi.Node
	for _, n := range f.Nodes {
		if strings.HasPrefix(r.URL.Path, "/v1/node/"+n.ID+"/") {
			node = n
		}
	}
	if node == nil {
		http.Error(w, "node not found", http.StatusNotFound)
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/drain"):
		var req nomadapi.NodeUpdateDrainRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.Drains = append(f.Drains, req)
		f.NodeWrites = append(f.NodeWrites, "drain "+node.ID)
		node.SchedulingEligibility = nomadapi.NodeSchedulingIneligible
		node.ModifyIndex = f.Bump("nodes")
		reply(nomadapi.NodeDrainUpdateResponse{}, node.ModifyIndex)
	case strings.HasSuffix(r.URL.Path, "/eligibility"):
		var req nomadapi.NodeUpdateEligibilityRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.NodeWrites = append(f.NodeWrites, "eligibility "+node.ID)
		node.SchedulingEligibility = req.Eligibility
		node.ModifyIndex = f.Bump("nodes")
		reply(nomadapi.NodeEligibilityUpdateResponse{}, node.ModifyIndex)
	default:
		http.Error(w, "not in the fake: PUT "+r.URL.Path, http.StatusNotFound)
	}
}

// listAllocs answers a plain allocation listing from AllocListing, keeping
// what a known filter lets through (f.Mu held).
func (f *ScaleNomad) listAllocs(w http.ResponseWriter, r *http.Request, reply func(any, uint64)) {
	f.AllocQueries = append(f.AllocQueries, r.URL.Query())
	all, err := f.AllocListing(len(f.AllocQueries))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	keep := func(*nomadapi.AllocationListStub) bool { return true }
	if filter := r.URL.Query().Get("filter"); filter != "" {
		if keep = f.Filters[filter]; keep == nil {
			http.Error(w, "fake nomad: unexpected filter "+filter, http.StatusBadRequest)
			return
		}
	}
	out := []*nomadapi.AllocationListStub{}
	for _, a := range all {
		if keep(a) {
			out = append(out, a)
		}
	}
	reply(out, f.listIdx["allocs"])
}

// deregister stops a job, or with ?purge=true removes it (f.Mu held).
func (f *ScaleNomad) deregister(w http.ResponseWriter, r *http.Request, reply func(any, uint64)) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/job/")
	for i, j := range f.Jobs {
		if *j.ID != id {
			continue
		}
		f.JobWrites = append(f.JobWrites, "deregister "+id)
		idx := f.Bump("jobs")
		if r.URL.Query().Get("purge") == "true" {
			f.Jobs = append(f.Jobs[:i], f.Jobs[i+1:]...)
		} else {
			stop := true
			j.Stop, j.ModifyIndex = &stop, &idx
		}
		reply(nomadapi.JobDeregisterResponse{JobModifyIndex: idx}, idx)
		return
	}
	http.Error(w, "job not found", http.StatusNotFound)
}
