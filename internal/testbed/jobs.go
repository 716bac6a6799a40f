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

// jobHCL is a stream job as a user writes it: a batch job of one group per
// stage, each naming the stage before it in harvest_after, each task a
// one-core allocation sleeping its length at the speed-up (its allocation
// index picks its length). Under stock the tasks run under raw_exec.
func jobHCL(j *job, p Policy, mhzPerCore int, speedup float64, bounded bool) string {
	driver := "harvest"
	if p == Stock {
		driver = "raw_exec"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job %q {\n  type = \"batch\"\n  meta {\n    harvest         = \"true\"\n    testbed_class   = %q\n    testbed_arrival = \"%.3f\"\n  }\n",
		j.ID, j.Class, j.At)
	for s, tasks := range j.Stages {
		lengths := make([]string, len(tasks))
		for i, d := range tasks {
			lengths[i] = strconv.FormatFloat(d/speedup, 'f', 2, 64)
		}
		fmt.Fprintf(&b, "  group \"s%d\" {\n    count = %d\n", s+1, len(tasks))
		if s > 0 {
			fmt.Fprintf(&b, "    meta {\n      harvest_after = \"s%d\"\n    }\n", s)
		}
		if bounded {
			b.WriteString(boundedReschedule)
		}
		fmt.Fprintf(&b, `    task "t" {
      driver = %q
      config {
        command = "/bin/sh"
        args    = ["-c", "set -- %s; shift ${NOMAD_ALLOC_INDEX}; exec sleep $1"]
      }
      resources {
        cpu    = %d
        memory = 32
      }
    }
  }
`, driver, strings.Join(lengths, " "), mhzPerCore)
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
