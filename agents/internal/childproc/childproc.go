// Package childproc starts the tools the agent runs (ping, traceroute, iperf3) one way: with
// a fixed locale and PATH, and tied to the agent's life, so an agent killed with SIGKILL
// leaves no iperf3 server holding its port and no probe running on.
package childproc

import (
	"context"
	"os/exec"
)

// Env is every tool's environment: the C locale (the parsers read English output) and a
// fixed PATH, nothing inherited from the agent.
func Env(extra ...string) []string {
	return append([]string{"LC_ALL=C", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, extra...)
}

// Command is exec.CommandContext with Env and the child tied to the agent: where the system
// allows it (Linux), the child is killed when the agent dies, however it dies.
func Command(ctx context.Context, binary string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = Env()
	tie(cmd)
	return cmd
}
