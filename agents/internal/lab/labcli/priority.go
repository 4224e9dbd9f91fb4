package labcli

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// emulatorNice is the emulator's scheduling priority. The emulator stands for the network, which
// no host's CPU load delays: at the default priority, iperf3, the stack and the test runner on two
// cores left its delay lines late by milliseconds and stretched a 65 ms path's RTT under load to 81
// ms, which the analysis rightly read as a queue. Not a real-time class: its delay lines spin for up
// to 120 µs and must never lock the hosts out.
const emulatorNice = -10

// raisePriority gives every thread of this process emulatorNice. Linux keeps the nice value per
// thread and a new thread inherits its creator's, so once a pass finds no thread it has not
// set, the threads the Go runtime starts later are covered too.
func raisePriority() error {
	done := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := 0
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, emulatorNice); err != nil {
				return fmt.Errorf("nice %d for thread %d: %w", emulatorNice, tid, err)
			}
			done[tid], fresh = true, fresh+1
		}
		if fresh == 0 {
			return nil
		}
	}
}
