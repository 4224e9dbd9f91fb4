// Package hostfacts collects what the ceiling math needs to know about this host: kernel,
// CPUs, interfaces (MTU, speed), the TCP buffer and congestion-control sysctls, and iperf3.
// Files are read below Root, so tests use a fake /proc and /sys tree.
package hostfacts

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Sysctls are the settings reported, by their dotted names.
var Sysctls = []string{
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.core.rmem_max",
	"net.core.wmem_max",
	"net.ipv4.tcp_adv_win_scale",
	"net.ipv4.tcp_congestion_control",
	"net.core.default_qdisc",
	"net.ipv4.tcp_window_scaling",
	"net.ipv4.tcp_moderate_rcvbuf",
}

// Interface is one network interface.
type Interface struct {
	Name      string   `json:"name"`
	MTU       *int     `json:"mtu"`
	SpeedMbps *int     `json:"speed_mbps"`
	Addresses []string `json:"addresses"`
}

// Facts is the body of PUT /api/v1/agent/host-facts/.
type Facts struct {
	CollectedAt   time.Time `json:"collected_at"`
	AgentVersion  string    `json:"agent_version"`
	Hostname      string    `json:"hostname"`
	Kernel        string    `json:"kernel"`
	OS            string    `json:"os"`
	CPUs          int       `json:"cpus,omitempty"`
	Iperf3Version string    `json:"iperf3_version"`
	Iperf3Port    *int      `json:"iperf3_port"`
	// Iperf3PublicKey is nil when the server runs without authentication.
	Iperf3PublicKey *string           `json:"iperf3_public_key"`
	Interfaces      []Interface       `json:"interfaces"`
	Sysctls         map[string]string `json:"sysctls"`
}

// Digest identifies the facts apart from when they were collected.
func (f Facts) Digest() string {
	f.CollectedAt = time.Time{}
	data, _ := json.Marshal(f)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Collector gathers facts. Its fields are the seams tests replace.
type Collector struct {
	Root        string
	IperfBinary string
	IperfPort   int // 0: no iperf3 server
	// IperfPublicKey is the PEM of the server's authentication key; empty: none.
	IperfPublicKey string
	AgentVersion   string
	Now            func() time.Time
	Addresses      func(iface string) []string
}

// New returns a collector of the real host.
func New(agentVersion, iperfBinary string, iperfPort int) *Collector {
	return &Collector{Root: "/", IperfBinary: iperfBinary, IperfPort: iperfPort, AgentVersion: agentVersion,
		Now: time.Now, Addresses: interfaceAddresses}
}

// Collect reads the facts; what cannot be read is left empty rather than guessed.
func (c *Collector) Collect(ctx context.Context) Facts {
	f := Facts{
		CollectedAt:  c.Now().UTC(),
		AgentVersion: c.AgentVersion,
		Hostname:     c.read("proc/sys/kernel/hostname"),
		Kernel:       c.read("proc/sys/kernel/osrelease"),
		OS:           c.osName(),
		CPUs:         c.cpus(),
		Interfaces:   c.interfaces(),
		Sysctls:      map[string]string{},
	}
	for _, name := range Sysctls {
		path := filepath.Join("proc/sys", strings.ReplaceAll(name, ".", "/"))
		if value, err := os.ReadFile(filepath.Join(c.Root, path)); err == nil {
			f.Sysctls[name] = strings.Join(strings.Fields(string(value)), " ")
		}
	}
	if c.IperfBinary != "" {
		f.Iperf3Version = Iperf3Version(ctx, c.IperfBinary)
	}
	if c.IperfPort > 0 {
		port := c.IperfPort
		f.Iperf3Port = &port
	}
	if c.IperfPublicKey != "" {
		key := c.IperfPublicKey
		f.Iperf3PublicKey = &key
	}
	return f
}

func (c *Collector) read(rel string) string {
	data, err := os.ReadFile(filepath.Join(c.Root, rel))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

func (c *Collector) osName() string {
	file, err := os.Open(filepath.Join(c.Root, "etc/os-release"))
	if err != nil {
		return ""
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(value, `"'`)
		}
	}
	return ""
}

// cpus counts online CPUs from a list such as "0-3,8-11".
func (c *Collector) cpus() int {
	total := 0
	for _, part := range strings.Split(c.read("sys/devices/system/cpu/online"), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err1 := strconv.Atoi(lo)
		last, err2 := first, error(nil)
		if isRange {
			last, err2 = strconv.Atoi(hi)
		}
		if err1 == nil && err2 == nil && last >= first {
			total += last - first + 1
		}
	}
	return total
}

func (c *Collector) interfaces() []Interface {
	dir := filepath.Join(c.Root, "sys/class/net")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []Interface{}
	}
	out := []Interface{}
	for _, e := range entries {
		name := e.Name()
		iface := Interface{Name: name, Addresses: []string{}}
		if mtu, err := strconv.Atoi(c.read(filepath.Join("sys/class/net", name, "mtu"))); err == nil && mtu > 0 {
			iface.MTU = &mtu
		}
		// Virtual interfaces answer EINVAL or -1: the speed is unknown, not zero.
		if speed, err := strconv.Atoi(c.read(filepath.Join("sys/class/net", name, "speed"))); err == nil && speed > 0 {
			iface.SpeedMbps = &speed
		}
		if c.Addresses != nil {
			iface.Addresses = c.Addresses(name)
		}
		out = append(out, iface)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func interfaceAddresses(name string) []string {
	out := []string{}
	iface, err := net.InterfaceByName(name)
	if err != nil {
		return out
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		out = append(out, a.String())
	}
	return out
}

var iperfVersion = regexp.MustCompile(`^iperf (\d+\.\d+(?:\.\d+)?)`)

// Iperf3Version asks iperf3 for its version ("3.12"); empty when it cannot run.
func Iperf3Version(ctx context.Context, binary string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "--version").Output()
	if err != nil && len(out) == 0 {
		return ""
	}
	if m := iperfVersion.FindStringSubmatch(strings.TrimSpace(string(out))); m != nil {
		return m[1]
	}
	return ""
}
