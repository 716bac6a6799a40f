//go:build acceptance

package acceptance

import (
	"io"
	"net"
	"sync"
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
