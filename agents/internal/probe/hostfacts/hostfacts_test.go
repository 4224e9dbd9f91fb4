package hostfacts

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
)

// fakeHost writes a /proc and /sys tree the way a Debian 12 host exposes them.
func fakeHost(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCollectReadsTheFakeTree(t *testing.T) {
	root := fakeHost(t, map[string]string{
		"proc/sys/kernel/hostname":                 "athens\n",
		"proc/sys/kernel/osrelease":                "6.1.0-40-amd64\n",
		"etc/os-release":                           "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
		"sys/devices/system/cpu/online":            "0-3,8-11\n",
		"proc/sys/net/ipv4/tcp_rmem":               "4096\t131072\t6291456\n",
		"proc/sys/net/core/rmem_max":               "212992\n",
		"proc/sys/net/ipv4/tcp_congestion_control": "cubic\n",
		"sys/class/net/eth0/mtu":                   "9000\n",
		"sys/class/net/eth0/speed":                 "10000\n",
		"sys/class/net/veth1/mtu":                  "1500\n",
		"sys/class/net/veth1/speed":                "-1\n",
		"sys/class/net/lo/mtu":                     "65536\n",
	})
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	c := &Collector{
		Root: root, IperfPort: 5201, AgentVersion: "test", Now: func() time.Time { return now },
		Addresses: func(name string) []string { return []string{name + "-addr"} },
	}
	f := c.Collect(context.Background())

	if f.Hostname != "athens" || f.Kernel != "6.1.0-40-amd64" || f.OS != "Debian GNU/Linux 12 (bookworm)" {
		t.Fatalf("identity %q %q %q", f.Hostname, f.Kernel, f.OS)
	}
	if f.CPUs != 8 {
		t.Fatalf("cpus %d, want 8 from 0-3,8-11", f.CPUs)
	}
	if !f.CollectedAt.Equal(now) || f.CollectedAt.Location() != time.UTC {
		t.Fatalf("collected_at %v must be the same instant in UTC", f.CollectedAt)
	}
	if got := f.Sysctls["net.ipv4.tcp_rmem"]; got != "4096 131072 6291456" {
		t.Fatalf("tcp_rmem %q: whitespace must be normalised", got)
	}
	if _, ok := f.Sysctls["net.ipv4.tcp_adv_win_scale"]; ok {
		t.Fatal("a sysctl the kernel lacks must be absent, not empty")
	}
	if len(f.Sysctls) != 3 {
		t.Fatalf("sysctls %v", f.Sysctls)
	}
	if len(f.Interfaces) != 3 || f.Interfaces[0].Name != "eth0" || f.Interfaces[2].Name != "veth1" {
		t.Fatalf("interfaces sorted by name: %+v", f.Interfaces)
	}
	eth0, veth := f.Interfaces[0], f.Interfaces[2]
	if *eth0.MTU != 9000 || *eth0.SpeedMbps != 10000 || eth0.Addresses[0] != "eth0-addr" {
		t.Fatalf("eth0 %+v", eth0)
	}
	if veth.SpeedMbps != nil {
		t.Fatal("speed -1 (virtual interface) must be unknown, not a number")
	}
	if f.Iperf3Port == nil || *f.Iperf3Port != 5201 {
		t.Fatal("iperf3 port not reported")
	}
}

func TestCollectOnAnEmptyTreeLeavesEverythingUnknown(t *testing.T) {
	c := &Collector{Root: t.TempDir(), Now: time.Now}
	f := c.Collect(context.Background())
	if f.Hostname != "" || f.CPUs != 0 || len(f.Interfaces) != 0 || len(f.Sysctls) != 0 || f.Iperf3Port != nil {
		t.Fatalf("guessed facts: %+v", f)
	}
}

func TestDigestIgnoresCollectionTime(t *testing.T) {
	a := Facts{Hostname: "x", CollectedAt: time.Unix(1, 0)}
	b := Facts{Hostname: "x", CollectedAt: time.Unix(2, 0)}
	if a.Digest() != b.Digest() {
		t.Fatal("digest changed with collected_at only")
	}
	b.Kernel = "6.1"
	if a.Digest() == b.Digest() {
		t.Fatal("digest did not change with the kernel")
	}
}

func TestIperf3VersionOfTheRealBinary(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed")
	}
	if v := Iperf3Version(context.Background(), "iperf3"); !regexp.MustCompile(`^3\.\d+`).MatchString(v) {
		t.Fatalf("version %q", v)
	}
	if v := Iperf3Version(context.Background(), "/nonexistent/iperf3"); v != "" {
		t.Fatalf("missing binary gave %q", v)
	}
}

func TestRealHostHasAKernelAndLoopback(t *testing.T) {
	f := New("test", "", 0, false).Collect(context.Background())
	if f.Kernel == "" || f.CPUs < 1 {
		t.Fatalf("real host: %+v", f)
	}
	// adjtimex reads without privilege on Linux: a container's clock is its host's.
	if f.Clock == nil || f.Clock.Source != ClockKernel || f.Clock.Readable != (runtime.GOOS == "linux") {
		t.Fatalf("real host's clock %+v", f.Clock)
	}
	found := false
	for _, iface := range f.Interfaces {
		found = found || iface.Name == "lo"
	}
	if !found {
		t.Fatal("no loopback interface")
	}
}

func TestCollectReportsTheClock(t *testing.T) {
	synced := func() (hostclock.State, error) {
		return hostclock.State{Synchronized: true, MaxError: 400 * time.Microsecond}, nil
	}
	unreadable := func() (hostclock.State, error) { return hostclock.Unknown, errors.New("adjtimex: not Linux") }
	lapsed := func() (hostclock.State, error) { return hostclock.State{MaxError: 3 * time.Hour}, nil }
	cases := []struct {
		name   string
		reader hostclock.Reader
		shared bool
		want   Clock
		// wantErrorMs is -1 for null.
		wantErrorMs float64
	}{
		{"synchronized", synced, false, Clock{Synchronized: true, Source: ClockKernel, Readable: true}, 0.4},
		{"unreadable: unknown, not a guess", unreadable, false, Clock{Source: ClockKernel}, -1},
		{"the kernel's cap", lapsed, false, Clock{Source: ClockKernel, Readable: true}, 16000},
		{"the lab's shared clock", hostclock.For(true), true, Clock{Synchronized: true, Source: ClockShared, Readable: true}, 0.001},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Collector{Root: t.TempDir(), Now: time.Now, Clock: tc.reader, ClockShared: tc.shared}
			got := c.Collect(context.Background()).Clock
			if got == nil {
				t.Fatal("no clock")
			}
			errorMs := got.MaxErrorMs
			plain := *got
			plain.MaxErrorMs = nil
			if plain != tc.want {
				t.Fatalf("clock %+v, want %+v", plain, tc.want)
			}
			switch {
			case tc.wantErrorMs < 0 && errorMs != nil:
				t.Fatalf("max error %v, want null", *errorMs)
			case tc.wantErrorMs >= 0 && (errorMs == nil || math.Abs(*errorMs-tc.wantErrorMs) > 1e-9):
				t.Fatalf("max error %v, want %v ms", errorMs, tc.wantErrorMs)
			}
		})
	}
}

func TestNewReportsTheSharedClockWhenDeclared(t *testing.T) {
	f := New("test", "", 0, true).Collect(context.Background())
	if f.Clock == nil || f.Clock.Source != ClockShared || !f.Clock.Synchronized {
		t.Fatalf("twamp.clock_shared: clock %+v", f.Clock)
	}
}

// The kernel grows maxerror between the daemon's updates: that alone is no change to report,
// but losing synchronization or an error ten times larger is.
func TestDigestFollowsTheClockCoarsely(t *testing.T) {
	withClock := func(synchronized bool, errorMs float64) Facts {
		return Facts{Hostname: "x", Clock: &Clock{Synchronized: synchronized, MaxErrorMs: &errorMs, Source: ClockKernel, Readable: true}}
	}
	base := withClock(true, 0.40).Digest()
	if withClock(true, 0.55).Digest() != base {
		t.Fatal("digest changed with the error's growth within its order of magnitude")
	}
	if withClock(true, 4.1).Digest() == base {
		t.Fatal("digest did not change with an error ten times larger")
	}
	if withClock(false, 0.40).Digest() == base {
		t.Fatal("digest did not change when the clock lost synchronization")
	}
	unknown := Facts{Hostname: "x", Clock: &Clock{Source: ClockKernel}}
	if unknown.Digest() == base || unknown.Digest() != unknown.Digest() {
		t.Fatal("an unreadable clock's digest")
	}
	original := withClock(true, 0.40)
	original.Digest()
	if *original.Clock.MaxErrorMs != 0.40 {
		t.Fatal("Digest changed the facts' clock")
	}
}
