package hostfacts

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
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
	f := New("test", "", 0).Collect(context.Background())
	if f.Kernel == "" || f.CPUs < 1 {
		t.Fatalf("real host: %+v", f)
	}
	found := false
	for _, iface := range f.Interfaces {
		found = found || iface.Name == "lo"
	}
	if !found {
		t.Fatal("no loopback interface")
	}
}
