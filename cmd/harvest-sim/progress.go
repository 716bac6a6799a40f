package main

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// progressBar shows how far a long command has come on stderr: on a
// terminal a bar redrawn in place; elsewhere (a log file, CI) a line at
// every tenth of the way, so that a run in the background still says
// where it is.
func progressBar(label string, done, total int) {
	fi, err := os.Stderr.Stat()
	if err != nil || total == 0 {
		return
	}
	if fi.Mode()&os.ModeCharDevice != 0 {
		drawBar(os.Stderr, label, done, total)
		return
	}
	lineProgress.report(os.Stderr, label, done, total)
}

func drawBar(w io.Writer, label string, done, total int) {
	const width = 30
	filled := done * width / total
	bar := make([]byte, width)
	for i := range bar {
		bar[i] = '.'
		if i < filled {
			bar[i] = '#'
		}
	}
	fmt.Fprintf(w, "\r%-28s [%s] %3d%%", label, bar, done*100/total)
	if done == total {
		fmt.Fprintln(w)
	}
}

// progressLines remembers, per label, the last tenth it printed.
type progressLines struct {
	mu    sync.Mutex
	tenth map[string]int
}

var lineProgress = &progressLines{tenth: map[string]int{}}

func (p *progressLines) report(w io.Writer, label string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tenth := 10 * done / total
	last, seen := p.tenth[label]
	if seen && tenth <= last || !seen && tenth == 0 && done < total {
		return
	}
	p.tenth[label] = tenth
	fmt.Fprintf(w, "%s: %d%%\n", label, done*100/total)
}
