package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/harvest-platform/harvest/sim/schedsim"
)

// job is one job of the stream as the testbed submits it.
type job struct {
	ID string
	schedsim.StreamJob
	Submitted time.Time // wall
	SubmitErr string
}

// taskReads is where a job's tasks read their input, when the run has a
// blob tier: its S3 endpoint and credentials, the dataset's size, and the
// first object this job reads.
type taskReads struct {
	Endpoint, AccessKey, SecretKey string
	Objects, First                 int
}

// jobSpec is how the run writes its jobs.
type jobSpec struct {
	Policy     Policy
	MHzPerCore int
	Speedup    float64
	Bounded    bool       // the proxy's former reschedule block in every group
	Reads      *taskReads // nil: the tasks only sleep
	Burn       *taskBurn  // nil: no task burns CPU
}

// taskBurn has the tasks that land on the real primary's node burn their
// share of its CPU (Share of one core, pinned to CPU, with Tool: harvest-dev)
// instead of sleeping; if the pinning fails (the CPU outside the task's
// cpuset) the task sleeps.
type taskBurn struct {
	Node  string
	CPU   int
	Share float64
	Tool  string
}

// hold is the shell that holds a task's allocation for $1 seconds; sleep
// is how it sleeps ("sleep" or "exec sleep").
func (b *taskBurn) hold(sleep string) string {
	if b == nil {
		return sleep + " $1"
	}
	return fmt.Sprintf(`if [ "${node.unique.name}" = %q ]; then taskset -c %d %s burn -share %s -seconds $1 || %s $1; else %s $1; fi`,
		b.Node, b.CPU, b.Tool, strconv.FormatFloat(b.Share, 'f', 4, 64), sleep, sleep)
}

// stageStride moves each stage of a job to other objects than the stage
// before it read (a prime, so the stages spread over any dataset size).
const stageStride = 7

// forJob is s for the stream's i-th job: its tasks start reading at
// object i, so the jobs spread over the dataset.
func (s jobSpec) forJob(i int) jobSpec {
	if s.Reads != nil {
		r := *s.Reads
		r.First = i
		s.Reads = &r
	}
	return s
}

// jobHCL is a stream job as a user writes it: a batch job of one group per
// stage, each naming the stage before it in harvest_after, each task a
// one-core allocation that reads its input object (when the run has a blob
// tier) while it sleeps its length at the speed-up (its allocation index picks
// its length and object). Under stock the tasks run under raw_exec.
func jobHCL(j *job, s jobSpec) string {
	driver := "harvest"
	if s.Policy == Stock {
		driver = "raw_exec"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job %q {\n  type = \"batch\"\n  meta {\n    harvest         = \"true\"\n    testbed_class   = %q\n    testbed_arrival = \"%.3f\"\n  }\n",
		j.ID, j.Class, j.At)
	for st, tasks := range j.Stages {
		lengths := make([]string, len(tasks))
		for i, d := range tasks {
			lengths[i] = strconv.FormatFloat(d/s.Speedup, 'f', 2, 64)
		}
		fmt.Fprintf(&b, "  group \"s%d\" {\n    count = %d\n", st+1, len(tasks))
		if st > 0 {
			fmt.Fprintf(&b, "    meta {\n      harvest_after = \"s%d\"\n    }\n", st)
		}
		if s.Bounded {
			b.WriteString(boundedReschedule)
		}
		script, env := "", ""
		if r := s.Reads; r != nil {
			script = readCommand(r.First+st*stageStride, r.Objects)
			env = fmt.Sprintf("      env {\n        HARVEST_S3_ENDPOINT   = %q\n        HARVEST_S3_ACCESS_KEY = %q\n        HARVEST_S3_SECRET_KEY = %q\n      }\n",
				r.Endpoint, r.AccessKey, r.SecretKey)
		}
		script += "set -- " + strings.Join(lengths, " ") + "; shift ${NOMAD_ALLOC_INDEX}; "
		if s.Reads != nil {
			script += s.Burn.hold("sleep") + "; wait"
		} else {
			script += s.Burn.hold("exec sleep")
		}
		fmt.Fprintf(&b, `    task "t" {
      driver = %q
      config {
        command = "/bin/sh"
        args    = ["-c", %s]
      }
%s      resources {
        cpu    = %d
        memory = 32
      }
    }
  }
`, driver, strconv.Quote(script), env, s.MHzPerCore)
	}
	b.WriteString("}\n")
	return b.String()
}

// submit writes the job file and runs `nomad job run -detach` on it with
// NOMAD_ADDR at the admission proxy, as a user would.
func submit(ctx context.Context, nomadBin, proxyAddr, dir string, j *job, hcl string) error {
	path := filepath.Join(dir, j.ID+".nomad.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, nomadBin, "job", "run", "-detach", path)
	cmd.Env = append(os.Environ(), "NOMAD_ADDR=http://"+proxyAddr, "NOMAD_CLI_SHOW_HINTS=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nomad job run %s: %w: %s", j.ID, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// boundedReschedule is the admission proxy's default before the testbed
// (placer/proxy defaultReschedule says why it changed).
const boundedReschedule = `    reschedule {
      attempts       = 5
      interval       = "1h"
      delay          = "5s"
      delay_function = "constant"
      unlimited      = false
    }
`
