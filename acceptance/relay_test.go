//go:build acceptance

package acceptance

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// relay listens on 127.0.0.1 and joins every connection to a new one to
// upstream: up copies the client's bytes to upstream, down the answers back
// (each from src to dst until src ends; the relay then closes dst's
// writing side). The test's end closes the listener and every connection
// and waits for the copies. It returns the listener's address.
func relay(t *testing.T, upstream string, up, down func(dst, src net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		open   []net.Conn
		closed bool
		wg     sync.WaitGroup
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		closed = true
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	copyThen := func(pass func(dst, src net.Conn), dst, src net.Conn) {
		defer wg.Done()
		pass(dst, src)
		_ = dst.(*net.TCPConn).CloseWrite()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				_, _ = c.Close(), u.Close()
				return
			}
			open = append(open, c, u)
			wg.Add(2)
			mu.Unlock()
			go copyThen(up, u, c)
			go copyThen(down, c, u)
		}
	}()
	return ln.Addr().String()
}

// startRelay relays every connection to upstream byte for byte (io.Copy
// between TCP connections, which Go splices in the kernel): one more hop
// that does no other work.
func startRelay(t *testing.T, upstream string) string {
	plain := func(dst, src net.Conn) { _, _ = io.Copy(dst, src) }
	return relay(t, upstream, plain, plain)
}

// relayEnv makes the test binary, started again, a relay process of its
// own (startRelayProcess), so that its CPU can be read apart from the test's.
const relayEnv = "HARVEST_ACCEPTANCE_RELAY"

func init() {
	if v := os.Getenv(relayEnv); v != "" {
		mode, upstream, _ := strings.Cut(v, ",")
		if err := serveRelay(mode, upstream); err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
		}
		os.Exit(2)
	}
}

// serveRelay relays connections to upstream until killed, printing its
// address first: "splice" by io.Copy between the TCP connections (the kernel
// moves the bytes), "copy" through a 1 MiB buffer in user space (every byte
// read and written once, as a proxy that looks at the bytes must).
func serveRelay(mode, upstream string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	pass := func(dst, src net.Conn) { _, _ = io.Copy(dst, src) }
	if mode == "copy" {
		pass = func(dst, src net.Conn) {
			_, _ = io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 1<<20))
		}
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		u, err := net.Dial("tcp", upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		go func() { pass(u, c); _ = u.(*net.TCPConn).CloseWrite() }()
		go func() { pass(c, u); _ = c.(*net.TCPConn).CloseWrite() }()
	}
}

// startRelayProcess starts a relay process ("splice" or "copy") to upstream
// and returns its address and pid; it is killed at cleanup.
func startRelayProcess(t *testing.T, upstream, mode string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), relayEnv+"="+mode+","+upstream)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("relay process: %v", err)
	}
	return strings.TrimSpace(addr), cmd.Process.Pid
}
