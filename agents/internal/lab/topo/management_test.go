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
	if holders, _ := interfacesWith(ManagementAddr.String()); len(holders) > 0 {
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
	mustIP("addr", "add", ManagementAddr.String()+"/24", "dev", bridge)

	mustIP("link", "set", bridge, "alias", ownerAlias(os.Getpid()))
	err := claimManagement(log)
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
	if err := claimManagement(log); err != nil {
		t.Fatalf("a dead owner's bridge: %v", err)
	}
	if _, err := net.InterfaceByName(bridge); err == nil {
		t.Fatal("a dead owner's bridge is still there")
	}
}
