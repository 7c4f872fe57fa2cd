//go:build !unix

package gotest

import "os/exec"

// inGroup: no process groups here; killGroup kills go test alone, and
// the test binary ends when its output pipe closes.
func inGroup(cmd *exec.Cmd) {}

// killGroup kills go test.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
