// Package hostfacts collects what the ceiling math needs to know about this host: kernel,
// CPUs, interfaces (MTU, speed), the TCP buffer and congestion-control sysctls, and iperf3;
// and its clock's synchronization, which one-way delays to and from it depend on.
// Files are read below Root, so tests use a fake /proc and /sys tree.
package hostfacts

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
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
	// Clock is nil only where no clock reader is set (tests).
	Clock *Clock `json:"clock,omitempty"`
}

// Clock sources.
const (
	ClockKernel = "kernel"
	ClockShared = "shared"
)

// Clock is the host clock's synchronization when the facts were collected.
type Clock struct {
	Synchronized bool `json:"synchronized"`
	// MaxErrorMs is nil when the clock could not be read.
	MaxErrorMs *float64 `json:"max_error_ms"`
	Source     string   `json:"source"`
	Readable   bool     `json:"readable"`
}

// maxClockError is the largest error the kernel declares (its maxerror stops growing there)
// and the contract accepts.
const maxClockError = 16 * time.Second

// ClockOf reports state as the facts carry it; err is the reader's.
func ClockOf(state hostclock.State, shared bool, err error) Clock {
	source := ClockKernel
	if shared {
		source = ClockShared
	}
	if err != nil {
		return Clock{Source: source}
	}
	errorMs := float64(min(state.MaxError, maxClockError)) / float64(time.Millisecond)
	return Clock{Synchronized: state.Synchronized, MaxErrorMs: &errorMs, Source: source, Readable: true}
}

// Digest identifies the facts apart from when they were collected. Of the clock's error it
// keeps the order of magnitude only: the kernel grows it by 500 ppm between the daemon's
// updates, so its exact value would make every collection a change to report.
func (f Facts) Digest() string {
	f.CollectedAt = time.Time{}
	if f.Clock != nil && f.Clock.MaxErrorMs != nil {
		clock := *f.Clock
		decade := errorDecade(*clock.MaxErrorMs)
		clock.MaxErrorMs = &decade
		f.Clock = &clock
	}
	data, _ := json.Marshal(f)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// errorDecade is the power of ten at or below errorMs (0 for none).
func errorDecade(errorMs float64) float64 {
	if errorMs <= 0 {
		return 0
	}
	return math.Pow(10, math.Floor(math.Log10(errorMs)))
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
	// ClockShared reports the lab's declared clock (twamp.clock_shared) instead of the
	// kernel's, as the latency probe and reflector declare it.
	ClockShared bool
	// Clock reads the host clock; nil: the facts carry no clock.
	Clock hostclock.Reader
}

// New returns a collector of the real host; clockShared is twamp.clock_shared.
func New(agentVersion, iperfBinary string, iperfPort int, clockShared bool) *Collector {
	return &Collector{Root: "/", IperfBinary: iperfBinary, IperfPort: iperfPort, AgentVersion: agentVersion,
		Now: time.Now, Addresses: interfaceAddresses, ClockShared: clockShared, Clock: hostclock.For(clockShared)}
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
	if c.Clock != nil {
		state, err := c.Clock()
		clock := ClockOf(state, c.ClockShared, err)
		f.Clock = &clock
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
