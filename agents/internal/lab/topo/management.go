package topo

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// The management address is fixed (agents and the demo are configured with it), so only
// one lab at a time can own it. A lab killed hard (SIGKILL, a machine that went away under
// a test run) leaves its bridge holding the address; a second bridge with the same /24
// then gets replies routed into the dead one and every agent's request times out. Each
// bridge therefore carries its owner's pid in its alias, and a new lab removes a bridge
// whose owner is gone and refuses to share the address with a live one.

var labBridge = regexp.MustCompile(`^(fl[0-9a-f]{4})br$`)

// BridgePrefix is the lab prefix of a management bridge's name ("fl1a2bbr" -> "fl1a2b").
func BridgePrefix(name string) (string, bool) {
	match := labBridge.FindStringSubmatch(name)
	if match == nil {
		return "", false
	}
	return match[1], true
}

const ownerAliasPrefix = "fathom-lab pid "

func ownerAlias(pid int) string { return ownerAliasPrefix + strconv.Itoa(pid) }

// aliasOwner is the pid in a bridge's alias, or 0 when it has none.
func aliasOwner(alias string) int {
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(alias), ownerAliasPrefix))
	if err != nil || !strings.HasPrefix(alias, ownerAliasPrefix) {
		return 0
	}
	return pid
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// interfacesWith lists the root namespace's interfaces holding addr.
func interfacesWith(addr string) ([]string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ipnet, ok := a.(*net.IPNet); ok && ipnet.IP.String() == addr {
				names = append(names, iface.Name)
			}
		}
	}
	return names, nil
}

// claimManagement makes the management address free for this lab: it sweeps bridges (and
// their namespaces) that dead labs left and fails if a live lab, or anything that is not a
// lab bridge, holds the address.
func claimManagement(log *slog.Logger) error {
	holders, err := interfacesWith(ManagementAddr.String())
	if err != nil {
		return fmt.Errorf("listing interfaces: %w", err)
	}
	for _, name := range holders {
		prefix, ok := BridgePrefix(name)
		if !ok {
			return fmt.Errorf("%s is already on %s, which is not a lab bridge: the management network needs it", ManagementAddr, name)
		}
		alias, _ := os.ReadFile("/sys/class/net/" + name + "/ifalias")
		if owner := aliasOwner(string(alias)); alive(owner) {
			return fmt.Errorf("lab %s (pid %d) already has the management network at %s: bring it down first (one lab with --management at a time)", prefix, owner, ManagementAddr)
		}
		log.Warn("removing the management bridge of a lab that died", "bridge", name)
		sweepPrefix(prefix, log) // Up holds the root-change lock
	}
	return nil
}

// SweepPrefix removes what a lab with this prefix left: its namespaces and its management
// bridge.
func SweepPrefix(prefix string, log *slog.Logger) {
	defer holdRootChanges(log)()
	sweepPrefix(prefix, log)
}

func sweepPrefix(prefix string, log *slog.Logger) {
	names, _ := Namespaces(prefix + "-")
	for _, ns := range names {
		if err := RemoveNamespace(ns); err != nil {
			log.Warn("namespace not removed", "namespace", ns, "error", err)
		}
	}
	if _, err := net.InterfaceByName(prefix + "br"); err == nil {
		if err := ip("link", "del", prefix+"br"); err != nil {
			log.Warn("bridge not removed", "bridge", prefix+"br", "error", err)
		}
	}
}
