package manager

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill an external plugin when the process
// that started it dies, even by SIGKILL (as Nomad kills a driver whose
// graceful stop hangs): a plugin must not outlive the component it serves.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
