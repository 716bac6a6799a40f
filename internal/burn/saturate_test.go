package burn

import (
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// Saturate's busy processes spin until stop, and are gone after it.
func TestSaturateBurnsUntilStopped(t *testing.T) {
	stop, err := Saturate(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	self, _ := fs.Self()
	before, _ := self.Stat()
	// the children's CPU shows once they are reaped; count the spinning
	// child by its own stat while it runs
	var spun float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && spun < 0.05; time.Sleep(50 * time.Millisecond) {
		procs, _ := fs.AllProcs()
		for _, p := range procs {
			if st, err := p.Stat(); err == nil && st.PPID == before.PID && st.Comm == "sh" {
				spun = max(spun, st.CPUTime())
			}
		}
	}
	if spun < 0.05 {
		t.Fatalf("the busy process used %.2f s of CPU", spun)
	}
	stop()
	procs, _ := fs.AllProcs()
	for _, p := range procs {
		if st, err := p.Stat(); err == nil && st.PPID == before.PID && st.Comm == "sh" && st.State != "Z" {
			t.Fatalf("busy process %d still runs after stop", st.PID)
		}
	}
}
