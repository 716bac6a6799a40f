package syncbuf

import (
	"fmt"
	"sync"
	"testing"
)

// Lines written from many goroutines are all kept and counted.
func TestConcurrentWritesAreAllCounted(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "line from %d\n", i)
			}
		}()
	}
	wg.Wait()
	if n := b.Count("line from"); n != 800 {
		t.Fatalf("counted %d lines, want 800", n)
	}
}
