//go:build unix

package gotest

import (
	"os/exec"
	"syscall"
)

// inGroup starts cmd (go test) in a process group of its own, so that
// killGroup ends the test binary it starts as well.
func inGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills cmd's process group: go test and the test binary.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
