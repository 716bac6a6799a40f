package standin

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A schedule samples the rate per step and says zero outside its span.
func TestScheduleStepsTheRate(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := SampleSchedule(func(t time.Time) float64 { return float64(t.Sub(start) / time.Second) }, start, 2500*time.Millisecond, time.Second)
	if len(s.Rates) != 3 || s.Duration() != 3*time.Second {
		t.Fatalf("rates %v over %v: want 3 steps of a second", s.Rates, s.Duration())
	}
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{-time.Millisecond, 0}, {0, 0}, {1500 * time.Millisecond, 1}, {2999 * time.Millisecond, 2}, {3 * time.Second, 0}} {
		if got := s.At(start.Add(c.at)); got != c.want {
			t.Errorf("rate at %v: %v, want %v", c.at, got, c.want)
		}
	}
}

// Replies cross the pipe whole: times, the answer's account, errors.
func TestRepliesRoundTrip(t *testing.T) {
	due := time.Date(2030, 1, 1, 0, 0, 1, 500, time.UTC)
	sent := []Reply{
		{Latency: 3 * time.Millisecond, Late: 40 * time.Microsecond, Served: Served{Handler: 2 * time.Millisecond, Wait: 7 * time.Microsecond, Known: true}},
		{Latency: 10 * time.Second, Err: errors.New("context deadline exceeded")},
	}
	var buf bytes.Buffer
	w := NewReplyWriter(&buf)
	for _, r := range sent {
		w.Record(due, r)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []Reply
	if err := ReadReplies(&buf, func(d time.Time, r Reply) {
		if !d.Equal(due) {
			t.Errorf("due %v, want %v", d, due)
		}
		got = append(got, r)
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != sent[0] || got[1].Err == nil || got[1].Err.Error() != sent[1].Err.Error() || got[1].Latency != sent[1].Latency {
		t.Fatalf("got %+v, want %+v", got, sent)
	}
	if err := ReadReplies(strings.NewReader(`{"due":1}`+"\n{not json\n"), func(time.Time, Reply) {}); err == nil || !strings.Contains(err.Error(), "reply 2") {
		t.Errorf("a garbled line: %v, want an error naming reply 2", err)
	}
}

// loadHelperEnv makes this test binary act as `harvest-dev standin-load`
// (TestMain), so DriveFrom is tested across a real process.
const loadHelperEnv = "HARVEST_STANDIN_LOAD_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(loadHelperEnv) != "1" {
		os.Exit(m.Run())
	}
	fs := flag.NewFlagSet("standin-load", flag.ContinueOnError)
	addr := fs.String("addr", "", "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	// as harvest-dev standin-load (command.Simple): SIGTERM ends the context
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := ServeLoad(ctx, *addr, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// DriveFrom hands the schedule to another process, which drives the
// stand-in by it, and every request's reply comes back with the answer's
// account; a schedule the process cannot use is an error.
func TestDriveFromAnotherProcess(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ServeOn(l) }()
	t.Setenv(loadHelperEnv, "1")
	argv := []string{os.Args[0]}
	start := time.Now().Add(500 * time.Millisecond) // the process's start
	s := Schedule{Start: start, Step: 200 * time.Millisecond, Rates: []float64{50, 0, 50}}
	var mu sync.Mutex
	var replies []Reply
	var dues []time.Time
	var stderr bytes.Buffer
	err = DriveFrom(context.Background(), argv, l.Addr().String(), s, func(due time.Time, r Reply) {
		mu.Lock()
		defer mu.Unlock()
		replies, dues = append(replies, r), append(dues, due)
	}, &stderr)
	if err != nil {
		t.Fatalf("%v (its stderr: %s)", err, stderr.String())
	}
	// 50/s for two steps of 200 ms: 10 every 20 ms, none in the step at 0
	if len(replies) != 20 {
		t.Fatalf("%d replies, want 20", len(replies))
	}
	for i, r := range replies {
		if r.Err != nil || !r.Served.Known || r.Served.Handler < RequestCPU || r.Latency < r.Served.Handler {
			t.Errorf("reply %d: %+v", i, r)
		}
		if off := dues[i].Sub(start); off >= 200*time.Millisecond && off < 400*time.Millisecond {
			t.Errorf("reply %d due %v after the start, in the step of rate 0", i, off)
		}
	}
	stderr.Reset()
	if err := DriveFrom(context.Background(), argv, l.Addr().String(), Schedule{Start: start}, func(time.Time, Reply) {}, &stderr); err == nil ||
		!strings.Contains(stderr.String(), "step") {
		t.Errorf("a schedule without a step: %v (stderr %q), want the process to fail naming the step", err, stderr.String())
	}
}

// Ending ctx stops the load process with SIGTERM: it flushes the replies it
// has and DriveFrom returns without an error, long before the schedule ends.
func TestDriveFromStopsWithItsContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ServeOn(l) }()
	t.Setenv(loadHelperEnv, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := Schedule{Start: time.Now().Add(500 * time.Millisecond), Step: time.Minute, Rates: []float64{50}}
	var mu sync.Mutex
	replies := 0
	var stderr bytes.Buffer
	err = DriveFrom(ctx, []string{os.Args[0]}, l.Addr().String(), s, func(time.Time, Reply) {
		mu.Lock()
		defer mu.Unlock()
		replies++
		cancel() // after the first reply
	}, &stderr)
	if err != nil {
		t.Fatalf("%v (stderr %s)", err, stderr.String())
	}
	if replies == 0 || replies >= 3000 {
		t.Fatalf("%d replies: want some, and fewer than the schedule's 3,000", replies)
	}
}
