package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task user that cannot pass through a folder above its task directory gets
// a start error naming the task directory, the folder, the user and the fix,
// not "fork/exec <command>: permission denied", and the refusal is counted.
func TestATaskDirTheUserCannotReachIsRefusedWithItsFolderNamed(t *testing.T) {
	h, d, _ := newHarness(t)
	cfg := task(t, h, d, "sleep", "/bin/sleep", "1")
	// the alloc dir's parent stands for a clone under a 0700 home folder
	private := filepath.Dir(cfg.AllocDir)
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, err := h.StartTask(cfg)
	if err == nil {
		t.Fatal("the task started although nobody cannot reach its task directory")
	}
	msg := err.Error()
	for _, want := range []string{cfg.TaskDir().Dir, private + " is mode 0700", `"nobody"`, "chmod o+x " + private} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "/bin/sleep") {
		t.Errorf("error %q names the command instead of the folder", msg)
	}
	if v := gauge(t, d.Metrics(), "harvest_driver_admissions_refused_total", map[string]string{"reason": "task_dir"}); v != 1 {
		t.Fatalf("refused{task_dir} = %v, want 1", v)
	}
	// opened to every user's search, the same folder lets the task start
	if err := os.Chmod(private, 0o711); err != nil {
		t.Fatal(err)
	}
	start(t, h, cfg)
	if res := wait(t, h, cfg.ID); res.ExitCode != 0 {
		t.Fatalf("exit %+v", res)
	}
}
