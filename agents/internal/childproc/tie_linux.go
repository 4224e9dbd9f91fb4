package childproc

import (
	"os/exec"
	"syscall"
)

// tie asks the kernel to SIGKILL the child when the agent dies (PR_SET_PDEATHSIG). The
// signal follows the thread that started the child; the agent locks no goroutine to a
// thread, so its threads live as long as it does.
func tie(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
