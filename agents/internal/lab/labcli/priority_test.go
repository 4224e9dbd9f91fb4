package labcli

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

// threadNices is the nice value of every thread of this process (the raw getpriority
// syscall returns 20 - nice).
func threadNices(t *testing.T) map[int]int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	nices := map[int]int{}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
		if err == nil {
			nices[tid] = 20 - raw
		}
	}
	return nices
}

func TestRaisePriorityNicesEveryThread(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a negative nice needs root")
	}
	t.Cleanup(func() {
		for tid := range threadNices(t) {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 0)
		}
	})
	if err := raisePriority(); err != nil {
		t.Fatal(err)
	}
	for tid, nice := range threadNices(t) {
		if nice != emulatorNice {
			t.Errorf("thread %d has nice %d, want %d", tid, nice, emulatorNice)
		}
	}
}
