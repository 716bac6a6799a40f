// Package syncbuf is a text buffer that goroutines may write while another
// reads it: the log sink of a test whose daemon logs from its own loops.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer is an io.Writer safe for concurrent use. The zero value is empty.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Count is how many times sub was written (strings.Count).
func (s *Buffer) Count(sub string) int {
	return strings.Count(s.String(), sub)
}
