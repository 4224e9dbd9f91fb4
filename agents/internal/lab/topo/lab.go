package topo

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fathom-net/fathom/agents/internal/lab/emu"
	"github.com/fathom-net/fathom/agents/internal/lab/scenario"
)

// Lab is a scenario brought up in this process: its emulator pumps run here, so the lab
// lives exactly as long as this process (Down, or its death, removes the devices).
type Lab struct {
	State *State
	// Directions by link name: [0] is a->b, [1] is b->a.
	Directions map[string][2]*emu.Direction
	log        *slog.Logger
	tuns       []emu.TUN
	stopping   atomic.Bool
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func nsSysctl(ns, key, value string) error {
	out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-q", "-w", key+"="+value).CombinedOutput()
	if err != nil {
		return fmt.Errorf("sysctl %s=%q in %s: %v: %s", key, value, ns, err, bytes.TrimSpace(out))
	}
	return nil
}

func sysctlPath(key string) string { return "/proc/sys/" + strings.ReplaceAll(key, ".", "/") }

func readSysctl(key string) (string, error) {
	data, err := os.ReadFile(sysctlPath(key))
	return strings.Join(strings.Fields(string(data)), " "), err
}

func writeSysctl(key, value string) error {
	if err := os.WriteFile(sysctlPath(key), []byte(value), 0o644); err != nil {
		return fmt.Errorf("sysctl %s=%q: %w", key, value, err)
	}
	return nil
}

// Namespaces lists the network namespaces whose names start with prefix (all lab ones
// when prefix is "fl").
func Namespaces(prefix string) ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil, fmt.Errorf("ip netns list: %w", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.HasPrefix(fields[0], prefix) {
			names = append(names, fields[0])
		}
	}
	return names, nil
}

// RemoveNamespace kills what runs in ns, then deletes it.
func RemoveNamespace(ns string) error {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, field := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(field); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return ip("netns", "del", ns)
}

// ManagementAddr is the root namespace's address on the management bridge; host i gets
// 198.19.0.(10+i). The bridge carries control traffic only (agents to the server): it is
// not shaped, and probes between hosts never use it.
var ManagementAddr = netip.AddrFrom4([4]byte{198, 19, 0, 1})

func managementHostAddr(i int) netip.Addr { return netip.AddrFrom4([4]byte{198, 19, 0, byte(10 + i)}) }

// Up creates the scenario's namespaces and links and starts the emulator; with management,
// also a bridge joining every host to the root namespace. On any error it removes what it
// made.
func Up(s *scenario.Scenario, prefix string, management bool, log *slog.Logger) (lab *Lab, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the lab needs root (network namespaces and TUN devices)")
	}
	defer holdRootChanges(log)()
	if existing, err := Namespaces(prefix + "-"); err != nil || len(existing) > 0 {
		return nil, fmt.Errorf("prefix %s is in use (%v): run `fathom-lab down` first: %w", prefix, existing, err)
	}
	lab = &Lab{
		State:      &State{Prefix: prefix, Scenario: s.Name, PID: os.Getpid(), Links: map[string][2]int{}, Routers: map[string][2][]string{}, Routers6: map[string][2][]string{}, RootSysctls: map[string]string{}},
		Directions: map[string][2]*emu.Direction{},
		log:        log,
	}
	defer func() {
		if err != nil {
			lab.down()
		}
	}()
	if err := lab.setRootSysctls(s); err != nil {
		return nil, err
	}
	for i, h := range s.Hosts {
		ns := Namespace(prefix, h.Name)
		if err := ip("netns", "add", ns); err != nil {
			return nil, err
		}
		host := HostState{Name: h.Name, Namespace: ns, Address: HostAddr(i).String()}
		if s.HasIPv6(i) {
			host.Address6 = HostAddr6(i).String()
		}
		lab.State.Hosts = append(lab.State.Hosts, host)
		if err := lab.configureHost(ns, i, h, host.Address6); err != nil {
			return nil, err
		}
	}
	for j, l := range s.Links {
		if err := lab.addLink(s, j, l); err != nil {
			return nil, err
		}
	}
	if management {
		if err := lab.addManagement(); err != nil {
			return nil, err
		}
	}
	return lab, nil
}

func (lab *Lab) bridgeName() string { return lab.State.Prefix + "br" }

func (lab *Lab) addManagement() error {
	if err := claimManagement(lab.log); err != nil {
		return err
	}
	bridge := lab.bridgeName()
	lab.State.Management = ManagementAddr.String()
	steps := [][]string{
		{"link", "add", bridge, "type", "bridge"},
		{"link", "set", bridge, "alias", ownerAlias(lab.State.PID)},
		{"addr", "add", ManagementAddr.String() + "/24", "dev", bridge},
		{"link", "set", bridge, "up"},
	}
	for i := range lab.State.Hosts {
		h := &lab.State.Hosts[i]
		outside, inside := fmt.Sprintf("%sm%d", lab.State.Prefix, i), fmt.Sprintf("%sn%d", lab.State.Prefix, i)
		h.ManagementAddress = managementHostAddr(i).String()
		steps = append(steps,
			[]string{"link", "add", outside, "type", "veth", "peer", "name", inside},
			[]string{"link", "set", outside, "master", bridge, "up"},
			[]string{"link", "set", inside, "netns", h.Namespace},
			[]string{"-n", h.Namespace, "link", "set", inside, "name", "mgmt"},
			[]string{"-n", h.Namespace, "addr", "add", h.ManagementAddress + "/24", "dev", "mgmt"},
			[]string{"-n", h.Namespace, "link", "set", "mgmt", "up"},
		)
	}
	for _, step := range steps {
		if err := ip(step...); err != nil {
			return err
		}
	}
	return nil
}

func (lab *Lab) setRootSysctls(s *scenario.Scenario) error {
	wanted := map[string]string{}
	for key, value := range s.RootSysctls {
		wanted[key] = value
	}
	// A namespace may choose only a congestion control the root namespace allows.
	allowedKey := "net.ipv4.tcp_allowed_congestion_control"
	allowed, _ := readSysctl(allowedKey)
	if v, ok := wanted[allowedKey]; ok {
		allowed = v
	}
	extended := strings.Fields(allowed)
	for _, h := range s.Hosts {
		if h.CongestionControl != "" && !contains(extended, h.CongestionControl) {
			extended = append(extended, h.CongestionControl)
		}
	}
	if strings.Join(extended, " ") != allowed {
		wanted[allowedKey] = strings.Join(extended, " ")
	}
	for key, value := range wanted {
		old, err := readSysctl(key)
		if err != nil {
			return fmt.Errorf("root sysctl %s: %w", key, err)
		}
		lab.State.RootSysctls[key] = old
		if err := writeSysctl(key, value); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, item string) bool {
	for _, v := range list {
		if v == item {
			return true
		}
	}
	return false
}

func (lab *Lab) configureHost(ns string, i int, h scenario.Host, address6 string) error {
	steps := [][]string{
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", HostAddr(i).String() + "/32", "dev", "lo"},
	}
	if address6 != "" {
		steps = append(steps, []string{"-n", ns, "-6", "addr", "add", address6 + "/128", "dev", "lo"})
	}
	for _, step := range steps {
		if err := ip(step...); err != nil {
			return err
		}
	}
	// No reverse-path filter: ECMP members' routers answer traceroute from addresses no
	// route leads back to. The link devices arrive later and take the default (0) here;
	// a device's filter is the larger of its own and `all`.
	settings := map[string]string{"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0"}
	if address6 != "" {
		// The link devices skip duplicate address detection, which would hold their
		// link-local addresses back and send solicitations through the emulator for nothing.
		settings["net.ipv6.conf.default.accept_dad"] = "0"
	}
	for key, value := range h.Sysctls {
		settings[key] = value
	}
	if h.CongestionControl != "" {
		settings["net.ipv4.tcp_congestion_control"] = h.CongestionControl
	}
	for key, value := range settings {
		if err := nsSysctl(ns, key, value); err != nil {
			return err
		}
	}
	return nil
}

func (lab *Lab) addLink(s *scenario.Scenario, j int, l scenario.Link) error {
	ia, ib := s.HostIndex(l.Between[0]), s.HostIndex(l.Between[1])
	ends := [2]struct {
		host, peer int
		tun        emu.TUN
		addr       string
	}{}
	aAddr, bAddr := linkAddrs(j)
	for side, host := range []int{ia, ib} {
		name := tunName(lab.State.Prefix, j, string(rune('a'+side)))
		fd, err := OpenTUNFD(name)
		if err != nil {
			return err
		}
		tun := emu.TUN{Name: name, FD: fd}
		lab.tuns = append(lab.tuns, tun)
		ends[side].tun, ends[side].host = tun, host
	}
	ends[0].peer, ends[1].peer = ib, ia
	ends[0].addr, ends[1].addr = aAddr.String(), bAddr.String()
	peerAddr := [2]string{bAddr.String(), aAddr.String()}
	for side, end := range ends {
		ns := lab.State.Hosts[end.host].Namespace
		steps := [][]string{
			{"link", "set", end.tun.Name, "netns", ns},
			{"-n", ns, "addr", "add", end.addr, "peer", peerAddr[side], "dev", end.tun.Name},
			{"-n", ns, "link", "set", end.tun.Name, "mtu", strconv.Itoa(l.LinkMTU()), "txqueuelen", "10000", "up"},
		}
		if l.Carries(scenario.IPv4) {
			steps = append(steps, []string{"-n", ns, "route", "add", HostAddr(end.peer).String() + "/32", "dev", end.tun.Name, "src", HostAddr(end.host).String()})
		}
		if l.Carries(scenario.IPv6) {
			steps = append(steps, []string{"-n", ns, "-6", "route", "add", HostAddr6(end.peer).String() + "/128", "dev", end.tun.Name, "src", HostAddr6(end.host).String()})
		}
		for _, step := range steps {
			if err := ip(step...); err != nil {
				return err
			}
		}
	}
	params := LinkParams(l, j)
	forward := emu.NewDirection(params[0], uint64(2*j+1))
	reverse := emu.NewDirection(params[1], uint64(2*j+2))
	lab.Directions[l.Name] = [2]*emu.Direction{forward, reverse}
	lab.State.Links[l.Name] = [2]int{ia, ib}
	if routers := l.Routers(j); len(routers[0])+len(routers[1]) > 0 {
		lab.State.Routers[l.Name] = [2][]string{addrStrings(routers[0]), addrStrings(routers[1])}
		if l.Carries(scenario.IPv6) {
			lab.State.Routers6[l.Name] = [2][]string{addrStrings(routers6(routers[0])), addrStrings(routers6(routers[1]))}
		}
	}
	pumpAB, pumpBA := emu.NewPumps(forward, reverse, ends[0].tun, ends[1].tun)
	for _, pump := range []*emu.Pump{pumpAB, pumpBA} {
		go func() {
			// Removing a namespace makes a blocked TUN read fail: that is the normal end.
			if err := pump.Run(); err != nil && !lab.stopping.Load() {
				lab.log.Error("link pump stopped", "link", l.Name, "error", err)
			}
		}()
	}
	return nil
}

func routers6(routers []netip.Addr) []netip.Addr {
	out := make([]netip.Addr, len(routers))
	for i, r := range routers {
		out[i] = scenario.Router6(r)
	}
	return out
}

func addrStrings(addrs []netip.Addr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

// OpenTUNFD is emu.OpenTUN, a variable so that tests can count devices.
var OpenTUNFD = emu.OpenTUN

// Down removes everything the lab made and restores the root sysctls. It is safe to call
// on a half-built lab and more than once.
func (lab *Lab) Down() {
	defer holdRootChanges(lab.log)()
	lab.down()
}

func (lab *Lab) down() {
	lab.stopping.Store(true)
	for _, h := range lab.State.Hosts {
		if err := RemoveNamespace(h.Namespace); err != nil {
			lab.log.Warn("namespace not removed", "namespace", h.Namespace, "error", err)
		}
	}
	lab.State.Hosts = nil
	if lab.State.Management != "" {
		// Removing the namespaces removed the veth pairs; the bridge is in the root namespace.
		if err := ip("link", "del", lab.bridgeName()); err != nil {
			lab.log.Warn("management bridge not removed", "error", err)
		}
		lab.State.Management = ""
	}
	for _, t := range lab.tuns {
		_ = syscall.Close(t.FD)
	}
	lab.tuns = nil
	for key, value := range lab.State.RootSysctls {
		if err := writeSysctl(key, value); err != nil {
			lab.log.Warn("root sysctl not restored", "key", key, "error", err)
		}
	}
	lab.State.RootSysctls = map[string]string{}
}

// WaitGone waits until no namespace with the prefix is left.
func WaitGone(prefix string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		left, err := Namespaces(prefix + "-")
		if err != nil || len(left) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespaces left behind: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
