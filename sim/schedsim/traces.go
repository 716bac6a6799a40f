package schedsim

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// MaxStageTasks caps a traced stage's width: a few traced jobs ask for more
// tasks than a simulated datacenter has cores.
const MaxStageTasks = 512

// TraceJob is one job's shape from a real trace: per stage, each task's
// duration in seconds.
type TraceJob struct{ Stages [][]float64 }

// ParseSWIM reads a SWIM workload (job, submit_s, gap_s, map_input_bytes,
// shuffle_bytes, reduce_output_bytes; tab-separated). SWIM gives sizes, not
// task times: a job becomes a map stage of one task per 64 MiB of input and,
// if it shuffles, a reduce stage of one task per 64 MiB shuffled, each task
// taking secondsPer64MiB (the usual Hadoop split; the rate is the caller's
// assumption).
func ParseSWIM(r io.Reader, secondsPer64MiB float64) ([]TraceJob, error) {
	const split = 64 << 20
	var out []TraceJob
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 6 {
			return nil, fmt.Errorf("swim line %d: %d fields, want 6 (job, submit, gap, input, shuffle, output)", line, len(f))
		}
		var sizes [3]float64
		for k := range sizes {
			v, err := strconv.ParseFloat(f[3+k], 64)
			if err != nil || v < 0 || !finite(v) {
				return nil, fmt.Errorf("swim line %d: byte count %q is not a non-negative number", line, f[3+k])
			}
			sizes[k] = v
		}
		job := TraceJob{Stages: [][]float64{stage(tasksFor(sizes[0], split), secondsPer64MiB)}}
		if sizes[1] > 0 {
			job.Stages = append(job.Stages, stage(tasksFor(sizes[1], split), secondsPer64MiB))
		}
		out = append(out, job)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("swim: no jobs")
	}
	return out, nil
}

// ParseAlibaba reads Alibaba's 2017 batch_task.csv (create, end, job_id,
// task_id, instances, status, cpu, mem; a header line) as ParseAlibabaTasks
// does. A job's tasks become its stages in order of creation, each of its
// instances lasting the task's end - create (the trace has no per-instance
// times). Tasks that never ran (end <= create) are skipped.
func ParseAlibaba(r io.Reader) ([]TraceJob, error) {
	tasks, err := ParseAlibabaTasks(r)
	if err != nil {
		return nil, err
	}
	byJob := map[string][]AlibabaTask{}
	var order []string
	for _, t := range tasks {
		if _, ok := byJob[t.Job]; !ok {
			order = append(order, t.Job)
		}
		byJob[t.Job] = append(byJob[t.Job], t)
	}
	out := make([]TraceJob, 0, len(order))
	for _, id := range order {
		ts := byJob[id]
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].Create < ts[j].Create })
		var job TraceJob
		for _, t := range ts {
			job.Stages = append(job.Stages, stage(t.Instances, t.End-t.Create))
		}
		out = append(out, job)
	}
	return out, nil
}

// AlibabaTask is one row of Alibaba's 2017 batch_task.csv that ran: a task
// of Instances identical instances created at Create and ended at End
// (relative seconds; the trace has no per-instance times), each asking for
// CPU (hundredths of a core) and Mem (a share of one machine's memory,
// normalised by Alibaba). CPU and Mem are 0 where the trace leaves them empty.
type AlibabaTask struct {
	Create, End float64
	Job, Task   string
	Instances   int
	Status      string
	CPU, Mem    float64
}

// ParseAlibabaTasks reads Alibaba's 2017 batch_task.csv (create, end,
// job_id, task_id, instances, status, cpu, mem; a header line) task by task,
// in file order, with the times and requests ParseAlibaba folds into job
// shapes. Tasks that never ran (end <= create, or no instances) are skipped.
func ParseAlibabaTasks(r io.Reader) ([]AlibabaTask, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var out []AlibabaTask
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("alibaba: %w", err)
		}
		if line == 1 && len(rec) > 0 && !isNumber(rec[0]) {
			continue // header
		}
		if len(rec) < 8 {
			return nil, fmt.Errorf("alibaba line %d: %d fields, want 8 (create, end, job, task, instances, status, cpu, mem)", line, len(rec))
		}
		create, err1 := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		end, err2 := strconv.ParseFloat(strings.TrimSpace(rec[1]), 64)
		n, err3 := strconv.Atoi(strings.TrimSpace(rec[4]))
		if err1 != nil || err2 != nil || err3 != nil || n < 0 || !finite(create) || !finite(end) {
			return nil, fmt.Errorf("alibaba line %d: create %q, end %q, instances %q must be numbers", line, rec[0], rec[1], rec[4])
		}
		var req [2]float64
		for k, f := range rec[6:8] {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || v < 0 || !finite(v) {
				return nil, fmt.Errorf("alibaba line %d: request %q is not a non-negative number", line, f)
			}
			req[k] = v
		}
		if end <= create || n == 0 {
			continue
		}
		out = append(out, AlibabaTask{Create: create, End: end, Job: strings.Clone(rec[2]), Task: strings.Clone(rec[3]), Instances: n,
			Status: strings.Clone(rec[5]), CPU: req[0], Mem: req[1]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("alibaba: no task that ran")
	}
	return out, nil
}

func tasksFor(bytes, split float64) int { return max(1, int(math.Ceil(bytes/split))) }

func stage(tasks int, seconds float64) []float64 {
	st := make([]float64, min(tasks, MaxStageTasks))
	for i := range st {
		st[i] = math.Max(1, seconds)
	}
	return st
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}
