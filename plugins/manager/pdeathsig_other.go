//go:build !linux

package manager

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal;
// go-plugin's Managed clients are still killed on a clean exit.
func dieWithParent(*exec.Cmd) {}
