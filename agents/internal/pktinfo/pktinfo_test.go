package pktinfo

import (
	"net/netip"
	"syscall"
	"testing"
)

// The control messages built here read back as the address they name.
func TestPacketInformationRoundTrips(t *testing.T) {
	from4 := netip.MustParseAddrPort("127.0.0.1:40000")
	from6 := netip.MustParseAddrPort("[2001:db8::1]:40000")
	for _, tc := range []struct {
		local netip.Addr
		from  netip.AddrPort
	}{
		{netip.MustParseAddr("192.0.2.7"), from4},
		{netip.MustParseAddr("192.0.2.7"), netip.AddrPortFrom(netip.AddrFrom16(from4.Addr().As16()), 40000)},
		{netip.MustParseAddr("2001:db8::7"), from6},
	} {
		want := syscall.CmsgSpace(syscall.SizeofInet6Pktinfo)
		if tc.local.Is4() {
			want = syscall.CmsgSpace(syscall.SizeofInet4Pktinfo)
		}
		if oob := AppendSendFrom([]byte{0xee}, tc.local); len(oob) != 1+want || oob[0] != 0xee {
			t.Errorf("%v: %d bytes after one", tc.local, len(oob))
		}
		oob := AppendSendFrom(nil, tc.local)
		if got, ok := ArrivedOn(oob, tc.from); !ok || got != tc.local {
			t.Errorf("%v from %v: read back %v %v", tc.local, tc.from, got, ok)
		}
	}
	// An IPv4 request on a dual-stack socket given only IPV6_RECVPKTINFO: the mapped address.
	mapped := AppendSendFrom(nil, netip.MustParseAddr("::ffff:192.0.2.7"))
	if got, ok := ArrivedOn(mapped, from4); !ok || got != netip.MustParseAddr("192.0.2.7") {
		t.Errorf("mapped: %v %v", got, ok)
	}
	for name, oob := range map[string][]byte{"none": nil, "garbage": {1, 2, 3}} {
		if got, ok := ArrivedOn(oob, from4); ok {
			t.Errorf("%s: %v", name, got)
		}
	}
	if _, ok := ArrivedOn(AppendSendFrom(nil, netip.MustParseAddr("192.0.2.7")), from6); ok {
		t.Error("an IPv6 request answered from an IPv4 address")
	}
}
