package command

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// stubbornEnv makes this test binary, started again, run a command that
// sees its context end and goes on regardless.
const stubbornEnv = "HARVEST_COMMAND_STUBBORN"

func TestMain(m *testing.M) {
	if os.Getenv(stubbornEnv) != "" {
		cmd, _ := Simple{Name: "stubborn", Run: func(ctx context.Context, _ *flag.FlagSet) error {
			fmt.Println("running")
			<-ctx.Done()
			fmt.Println("context ended")
			select {} // a long simulation between its checks
		}}.Factory()()
		os.Exit(cmd.Run(nil))
	}
	os.Exit(m.Run())
}

// The first SIGTERM ends the command's context; a second one ends the
// process, although the command never returns.
func TestASecondSignalEndsACommandThatGoesOn(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), stubbornEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(out)
	expect := func(want string) {
		t.Helper()
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("the command said %q (%v), want %q", lines.Text(), lines.Err(), want)
		}
	}
	expect("running")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	expect("context ended")
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("the first signal ended the process (%v): the command had not returned", err)
	case <-time.After(200 * time.Millisecond):
	}
	// the handler is given back just after the context ends: signal until it is
	for deadline := time.Now().Add(time.Minute); ; {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Fatalf("the process ended with %v, want killed by SIGTERM", err)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("a second SIGTERM did not end the process")
		}
	}
}

// A command that returns says nothing of an interrupt: the deferred stop
// that ends its context at the return is not a signal.
func TestACommandThatReturnsIsNotInterrupted(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	for i := 0; i < 500; i++ {
		cmd, _ := Simple{Name: "quick", Run: func(context.Context, *flag.FlagSet) error { return nil }}.Factory()()
		if code := cmd.Run(nil); code != 0 {
			os.Stderr = saved
			t.Fatalf("exit %d", code)
		}
	}
	time.Sleep(100 * time.Millisecond) // the last goroutines' turn
	os.Stderr = saved
	w.Close()
	said, _ := io.ReadAll(r)
	if len(said) > 0 {
		t.Fatalf("a command that returned printed %q", said)
	}
}
