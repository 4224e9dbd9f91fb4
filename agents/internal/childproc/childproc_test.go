package childproc

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestEnvIsFixedAndTakesExtras(t *testing.T) {
	t.Setenv("LANG", "de_DE.UTF-8")
	env := Env("IPERF3_PASSWORD=x")
	if env[0] != "LC_ALL=C" || !strings.HasPrefix(env[1], "PATH=") || env[2] != "IPERF3_PASSWORD=x" || len(env) != 3 {
		t.Fatalf("env %q", env)
	}
}

// The helper process plays the agent: it starts a long sleep through Command, prints the
// sleep's pid and waits to be killed.
func TestHelperAgent(t *testing.T) {
	if os.Getenv("CHILDPROC_HELPER") != "1" {
		t.Skip("helper process")
	}
	cmd := Command(context.Background(), "sleep", "60")
	if err := cmd.Start(); err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
	time.Sleep(time.Minute)
}

func TestAChildDiesWithAnAgentKilledWithSIGKILL(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux ties a child to its parent")
	}
	agent := exec.Command(os.Args[0], "-test.run=^TestHelperAgent$")
	agent.Env = append(os.Environ(), "CHILDPROC_HELPER=1")
	out, err := agent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 32)
	n, err := out.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	if err != nil {
		t.Fatalf("helper printed %q", line[:n])
	}
	if err := syscall.Kill(child, 0); err != nil {
		t.Fatalf("child %d not running: %v", child, err)
	}
	_ = agent.Process.Kill()
	_ = agent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("child %d outlived the agent killed with SIGKILL", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
