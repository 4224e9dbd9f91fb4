//go:build !linux

package childproc

import "os/exec"

// tie does nothing where the kernel cannot tie a child to its parent's life.
func tie(*exec.Cmd) {}
