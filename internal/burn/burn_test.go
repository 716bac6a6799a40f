package burn

import (
	"runtime"
	"testing"
	"time"
)

func TestSpinUsesTheThreadsCPUTime(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := ThreadCPU()
	Spin(20 * time.Millisecond)
	if used := ThreadCPU() - start; used < 20*time.Millisecond {
		t.Fatalf("Spin(20ms) used %s of CPU", used)
	}
}
