package testbed

import (
	"fmt"
	"sort"
	"time"

	"github.com/harvest-platform/harvest/history"
	"github.com/harvest-platform/harvest/sim/schedsim"
)

// Plan is what a run will ask of this host, known before it starts: the
// stream's jobs and tasks, and how fast allocations must start.
type Plan struct {
	Jobs               int     `json:"jobs"`
	Tasks              int     `json:"tasks"`
	JobScale           float64 `json:"job_scale"`
	WallMinutes        float64 `json:"wall_minutes"` // the span's
	TasksPerWallSecond float64 `json:"tasks_per_wall_second"`
	ShortestTaskWall   float64 `json:"shortest_task_wall_seconds"`
	MedianTaskWall     float64 `json:"median_task_wall_seconds"`
}

// PlanOf computes c's plan without starting anything.
func PlanOf(c Config) (Plan, error) {
	if err := c.Validate(); err != nil {
		return Plan{}, err
	}
	ps, err := c.primaries(time.Now().UTC().Truncate(history.Slot))
	if err != nil {
		return Plan{}, err
	}
	stream, scale, err := c.stream(c.simConfig(ps))
	if err != nil {
		return Plan{}, err
	}
	var lengths []float64
	for _, j := range stream {
		for _, st := range j.Stages {
			for _, d := range st {
				lengths = append(lengths, d/c.Speedup)
			}
		}
	}
	sort.Float64s(lengths)
	p := Plan{Jobs: len(stream), Tasks: len(lengths), JobScale: scale, WallMinutes: c.TraceHours * 60 / c.Speedup}
	p.TasksPerWallSecond = float64(p.Tasks) / (p.WallMinutes * 60)
	if len(lengths) > 0 {
		p.ShortestTaskWall, p.MedianTaskWall = lengths[0], lengths[len(lengths)/2]
	}
	return p, nil
}

// stream is the run's job stream and its job scale: the simulator's
// (schedsim.Stream), and no job under None.
func (c Config) stream(cfg schedsim.Config) ([]schedsim.StreamJob, float64, error) {
	stream, scale, _, err := schedsim.Stream(cfg)
	if err != nil {
		return nil, 0, fmt.Errorf("the job stream: %w", err)
	}
	if c.Policy == None {
		stream = nil
	}
	return stream, scale, nil
}

func (p Plan) String() string {
	return fmt.Sprintf("%d jobs, %d tasks (job scale %.3f) over %.0f wall minutes: %.2f allocations a second at least; tasks of %.1f s wall at the shortest, %.1f s at the median",
		p.Jobs, p.Tasks, p.JobScale, p.WallMinutes, p.TasksPerWallSecond, p.ShortestTaskWall, p.MedianTaskWall)
}
