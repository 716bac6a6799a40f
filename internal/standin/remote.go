package standin

// The load from a process of its own (harvest-dev standin-load), so that it
// can run where the measured side's neighbours cannot delay it: at a
// real-time priority (SCHED_FIFO), above every daemon on its CPU. The
// paper's load generators ran on machines of their own; a load driven from
// the testbed's process, beside the daemons on a shared CPU, is late when
// they are busy, and its lateness counts in the latency (Reply.Late).
// The parent hands the process a Schedule on its standard input and reads
// one JSON line per Reply from its standard output.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Schedule is a load's rate as steps: Rates[i] requests a second from
// Start + i*Step, none outside.
type Schedule struct {
	Start time.Time     `json:"start"`
	Step  time.Duration `json:"step"`
	Rates []float64     `json:"rates"`
}

// SampleSchedule samples rateAt at start, start+step, ... for d.
func SampleSchedule(rateAt func(time.Time) float64, start time.Time, d, step time.Duration) Schedule {
	s := Schedule{Start: start, Step: step}
	for off := time.Duration(0); off < d; off += step {
		s.Rates = append(s.Rates, rateAt(start.Add(off)))
	}
	return s
}

// Duration is how long the schedule lasts.
func (s Schedule) Duration() time.Duration { return time.Duration(len(s.Rates)) * s.Step }

// At is the rate at t.
func (s Schedule) At(t time.Time) float64 {
	if t.Before(s.Start) || s.Step <= 0 {
		return 0
	}
	i := int(t.Sub(s.Start) / s.Step)
	if i >= len(s.Rates) {
		return 0
	}
	return s.Rates[i]
}

// replyLine is a Reply on the wire, durations in nanoseconds.
type replyLine struct {
	Due     int64  `json:"due"` // Unix nanoseconds
	Latency int64  `json:"latency"`
	Late    int64  `json:"late"`
	Handler int64  `json:"handler,omitempty"`
	Wait    int64  `json:"wait,omitempty"`
	Known   bool   `json:"known,omitempty"`
	Err     string `json:"err,omitempty"`
}

// ReplyWriter writes Drive's replies as JSON lines; Record is safe from
// many goroutines, and Flush ends the output.
type ReplyWriter struct {
	mu  sync.Mutex
	buf *bufio.Writer
	enc *json.Encoder
	err error
}

// NewReplyWriter writes to w.
func NewReplyWriter(w io.Writer) *ReplyWriter {
	buf := bufio.NewWriter(w)
	return &ReplyWriter{buf: buf, enc: json.NewEncoder(buf)}
}

// Record writes one reply (Drive's record).
func (w *ReplyWriter) Record(due time.Time, r Reply) {
	line := replyLine{Due: due.UnixNano(), Latency: int64(r.Latency), Late: int64(r.Late),
		Handler: int64(r.Served.Handler), Wait: int64(r.Served.Wait), Known: r.Served.Known}
	if r.Err != nil {
		line.Err = r.Err.Error()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.enc.Encode(line)
	}
}

// Flush writes what is buffered and returns the first write error.
func (w *ReplyWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.buf.Flush()
	}
	return w.err
}

// ReadReplies hands every reply on r to record, in order, until r ends.
func ReadReplies(r io.Reader, record func(due time.Time, r Reply)) error {
	dec := json.NewDecoder(r)
	for n := 1; ; n++ {
		var line replyLine
		if err := dec.Decode(&line); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reply %d: %w", n, err)
		}
		reply := Reply{Latency: time.Duration(line.Latency), Late: time.Duration(line.Late),
			Served: Served{Handler: time.Duration(line.Handler), Wait: time.Duration(line.Wait), Known: line.Known}}
		if line.Err != "" {
			reply.Err = errors.New(line.Err)
		}
		record(time.Unix(0, line.Due), reply)
	}
}

// realtimePriority is the load's SCHED_FIFO priority: above every
// ordinary (SCHED_OTHER) process, the lowest of the real-time ones.
const realtimePriority = "10"

// RealtimeLoad is the command line that runs `harvest-dev standin-load`
// (harvestDev, the binary's path) at SCHED_FIFO, above every ordinary
// process, pinned to cpus (taskset's list, such as "0").
func RealtimeLoad(harvestDev, cpus string) []string {
	return []string{"chrt", "--fifo", realtimePriority, "taskset", "-c", cpus, harvestDev, "standin-load"}
}

// CheckRealtime says why this process cannot start one at SCHED_FIFO
// (chrt missing, or no right to a real-time priority: root or
// CAP_SYS_NICE), so a run fails at its start rather than measure nothing.
func CheckRealtime() error {
	if out, err := exec.Command("chrt", "--fifo", realtimePriority, "true").CombinedOutput(); err != nil {
		return fmt.Errorf("a real-time load needs chrt and the right to SCHED_FIFO (root or CAP_SYS_NICE): %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// DriveFrom is Drive from the process argv starts (RealtimeLoad, or any
// command that speaks standin-load's protocol): the stand-in on addr, the
// schedule's load, each reply to record. The process's diagnostics go to
// stderr. It returns when the process has ended: at the schedule's end, or
// at ctx's end, which stops it with SIGTERM.
func DriveFrom(ctx context.Context, argv []string, addr string, s Schedule, record func(due time.Time, r Reply), stderr io.Writer) error {
	schedule, err := json.Marshal(s)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], "-addr", addr)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // it flushes what it has
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdin, cmd.Stderr = bytes.NewReader(schedule), stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("the load process: %w", err)
	}
	readErr := ReadReplies(out, record)
	if readErr != nil {
		_, _ = io.Copy(io.Discard, out) // let it finish rather than block on a full pipe
	}
	if err := cmd.Wait(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("the load process: %w", err)
	}
	return readErr
}

// ServeLoad is standin-load's side: it reads a Schedule from in, drives the
// stand-in on addr by it (or until ctx ends) and writes every reply to out.
func ServeLoad(ctx context.Context, addr string, in io.Reader, out io.Writer) error {
	var s Schedule
	if err := json.NewDecoder(in).Decode(&s); err != nil {
		return fmt.Errorf("the schedule: %w", err)
	}
	if s.Step <= 0 {
		return fmt.Errorf("the schedule's step %s: want a positive step", s.Step)
	}
	w := NewReplyWriter(out)
	Drive(ctx, addr, s.Start, s.Duration(), s.At, w.Record)
	return w.Flush()
}
