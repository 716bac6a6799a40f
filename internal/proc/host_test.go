package proc

import (
	"os"
	"testing"
)

// The host has spent some CPU time busy since boot, and this test's process
// is among its parent's children.
func TestHostBusySecondsAndChildren(t *testing.T) {
	busy, err := HostBusySeconds()
	if err != nil || busy <= 0 {
		t.Fatalf("HostBusySeconds: %v, %v; want a positive time", busy, err)
	}
	found := false
	for _, pid := range Children()[os.Getppid()] {
		found = found || pid == os.Getpid()
	}
	if !found {
		t.Fatalf("Children()[%d] does not hold this process (%d)", os.Getppid(), os.Getpid())
	}
}
