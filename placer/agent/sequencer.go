package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/placer/dag"
	"github.com/harvest-platform/harvest/placer/proxy"
	"github.com/harvest-platform/harvest/placer/stages"
)

// settle is how long a failed allocation may wait for the scheduler to
// plan its replacement before it counts as failed for good.
const settle = 10 * time.Second

// sequencer starts deferred stages of harvested DAG jobs when their
// upstream stages complete, and records each harvested job's duration when
// it finishes (for the next run's job type). It polls Nomad every interval.
type sequencer struct {
	nomad    *nomadapi.Client
	store    *history.Store
	log      hclog.Logger
	interval time.Duration
	recorded map[string]bool // namespace/job@modify-index already recorded
}

func (s *sequencer) run(ctx context.Context) {
	ticker := time.NewTicker(s.interval)
	defer ticker.Stop()
	for {
		if err := s.tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("stage sequencing pass failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (s *sequencer) tick(ctx context.Context) error {
	q := &nomadapi.QueryOptions{Namespace: "*", Params: map[string]string{"meta": "true"}}
	jobs, _, err := s.nomad.Jobs().List(q.WithContext(ctx))
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Meta[proxy.HarvestKey] != "true" && j.Meta[proxy.JobTypeKey] == "" {
			continue
		}
		if err := s.job(ctx, j); err != nil {
			s.log.Warn("sequencing job failed", "job", j.ID, "namespace", j.Namespace, "error", err)
		}
	}
	return nil
}

func (s *sequencer) job(ctx context.Context, stub *nomadapi.JobListStub) error {
	q := (&nomadapi.QueryOptions{Namespace: stub.Namespace}).WithContext(ctx)
	job, _, err := s.nomad.Jobs().Info(stub.ID, q)
	if err != nil {
		return err
	}
	allocs, _, err := s.nomad.Jobs().Allocations(stub.ID, true, q)
	if err != nil {
		return err
	}
	declared := map[string]int{}
	if v := job.Meta[proxy.StagesKey]; v != "" {
		if err := json.Unmarshal([]byte(v), &declared); err != nil {
			return fmt.Errorf("meta %s: %w", proxy.StagesKey, err)
		}
	}
	var groups []stages.Group
	for _, tg := range job.TaskGroups {
		g := stages.Group{Name: *tg.Name, Count: *tg.Count, Declared: *tg.Count, After: dag.ParseAfter(tg.Meta[dag.AfterKey])}
		if d, ok := declared[g.Name]; ok && g.Count == 0 {
			g.Declared = d
		}
		for _, a := range allocs {
			if a.TaskGroup != g.Name || a.JobVersion != *job.Version && a.ClientStatus != "complete" {
				continue
			}
			switch {
			case a.ClientStatus == nomadapi.AllocClientStatusComplete:
				g.Complete++
			case a.ClientStatus == nomadapi.AllocClientStatusFailed || a.ClientStatus == nomadapi.AllocClientStatusLost:
				switch {
				case a.NextAllocation != "":
					// replaced (an eviction rescheduled): the replacement counts
				case a.FollowupEvalID != "" || time.Since(time.Unix(0, a.ModifyTime)) < settle:
					g.Active++ // a replacement is coming, or the scheduler has not decided yet
				default:
					g.Failed++
				}
			default:
				g.Active++
			}
		}
		groups = append(groups, g)
	}
	for _, act := range stages.Next(groups) {
		count := act.Count
		wq := (&nomadapi.WriteOptions{Namespace: stub.Namespace}).WithContext(ctx)
		if _, _, err := s.nomad.Jobs().Scale(stub.ID, act.Group, &count, act.Message, act.Error, nil, wq); err != nil {
			return fmt.Errorf("scale %s: %w", act.Group, err)
		}
		s.log.Info("stage", "job", stub.ID, "group", act.Group, "count", count, "error", act.Error, "message", act.Message)
	}
	if *job.Status == "dead" {
		return s.record(ctx, job, allocs, groups)
	}
	return nil
}

// record stores a finished job's duration: from submission to its last
// allocation's end.
func (s *sequencer) record(ctx context.Context, job *nomadapi.Job, allocs []*nomadapi.AllocationListStub, groups []stages.Group) error {
	key := fmt.Sprintf("%s/%s@%d", *job.Namespace, *job.ID, *job.JobModifyIndex)
	if s.recorded[key] || len(allocs) == 0 {
		return nil
	}
	end := int64(0)
	for _, a := range allocs {
		end = max(end, a.ModifyTime)
	}
	status := "complete"
	for _, g := range groups {
		if !g.Done() {
			status = "failed"
		}
	}
	run := history.JobRun{Namespace: *job.Namespace, Job: *job.ID, Duration: time.Duration(end - *job.SubmitTime),
		Finished: time.Unix(0, end).UTC(), Status: status}
	if run.Duration <= 0 {
		return nil
	}
	if err := s.store.RecordJobRun(ctx, run); err != nil {
		return err
	}
	s.recorded[key] = true
	s.log.Info("recorded job run", "job", run.Job, "namespace", run.Namespace, "duration", run.Duration.Round(time.Second), "status", status)
	return nil
}
