package burn

import (
	"context"
	"os/exec"
	"sync"
	"syscall"
)

// Saturate keeps a machine busy the way other work on a shared host does:
// busy processes spinning at nice 0 (the shell's empty loop) and burst
// threads starting and ending short-lived processes (/bin/true) back to
// back, until stop. The busy processes die with the caller (Pdeathsig).
func Saturate(busy, burst int) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var loops []*exec.Cmd
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			for _, c := range loops {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
		})
	}
	for range busy {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			stop()
			return nil, err
		}
		loops = append(loops, cmd)
	}
	for range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_ = exec.CommandContext(ctx, "/bin/true").Run()
			}
		}()
	}
	return stop, nil
}
