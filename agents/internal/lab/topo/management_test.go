package topo

import (
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestAliasOwner(t *testing.T) {
	for alias, want := range map[string]int{
		ownerAlias(4242):        4242,
		ownerAlias(17) + "\n":   17,
		"":                      0,
		"some other alias":      0,
		ownerAliasPrefix + "x1": 0,
	} {
		if got := aliasOwner(alias); got != want {
			t.Errorf("aliasOwner(%q) = %d, want %d", alias, got, want)
		}
	}
}

// A bridge holding the management address: removed when its lab is dead, kept (and the
// new lab refused) when its lab is alive. Needs root, as the lab does.
func TestClaimManagementSweepsOnlyDeadLabs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if holders, _ := interfacesWith(DefaultManagementAddr.String()); len(holders) > 0 {
		t.Skipf("a lab is up here (%v)", holders)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bridge := NewPrefix() + "br"
	mustIP := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	mustIP("link", "add", bridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", bridge).Run() })
	mustIP("addr", "add", DefaultManagementAddr.String()+"/24", "dev", bridge)

	mustIP("link", "set", bridge, "alias", ownerAlias(os.Getpid()))
	err := claimManagement(DefaultManagementAddr, log)
	if err == nil || !strings.Contains(err.Error(), "already has the management network") {
		t.Fatalf("a live owner's bridge: got %v", err)
	}
	if _, err := net.InterfaceByName(bridge); err != nil {
		t.Fatalf("a live owner's bridge was removed: %v", err)
	}

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mustIP("link", "set", bridge, "alias", ownerAlias(dead.Process.Pid))
	if err := claimManagement(DefaultManagementAddr, log); err != nil {
		t.Fatalf("a dead owner's bridge: %v", err)
	}
	if _, err := net.InterfaceByName(bridge); err == nil {
		t.Fatal("a dead owner's bridge is still there")
	}
}

func TestManagementAddrFromTheEnvironment(t *testing.T) {
	cases := []struct {
		value, want, err string
	}{
		{"", "198.19.0.1", ""},
		{"198.19.3.1", "198.19.3.1", ""},
		{"198.19.16.1", "", "outside the management block"},
		{"198.19.3.2", "", "outside the management block"},
		{"10.0.0.1", "", "outside the management block"},
		{"2001:2::1", "", "not an IPv4 address"},
		{"nonsense", "", "not an IPv4 address"},
	}
	for _, c := range cases {
		t.Setenv(ManagementEnv, c.value)
		addr, err := ManagementAddr()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one saying %q", c.value, err, c.err)
			}
			continue
		}
		if err != nil || addr.String() != c.want {
			t.Errorf("%q: %v, %v; want %s", c.value, addr, err, c.want)
		}
		if host := managementHostAddr(addr, 2).String(); host[len(host)-3:] != ".12" {
			t.Errorf("%q: host 2 at %s, want .12 of the same /24", c.value, host)
		}
	}
}
