package twampcontrol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/fathom-net/fathom/agents/internal/probe/twamp"
)

// The sizes of the TWAMP-Control messages (RFC 4656 §3.1-3.8 as RFC 5357 §3 amends them),
// each with its HMAC field, which is present, and zero, in unauthenticated mode too.
const (
	greetingSize        = 64  // Unused 12, Modes 4, Challenge 16, Salt 16, Count 4, MBZ 12
	setUpResponseSize   = 164 // Mode 4, KeyID 80, Token 64, Client-IV 16
	serverStartSize     = 48  // MBZ 15, Accept 1, Server-IV 16, Start-Time 8, MBZ 8
	commandSize         = 32  // Start-Sessions and Stop-Sessions; the first 32 of any command
	requestSessionSize  = 112 // Request-TW-Session (RFC 5357 §3.5)
	acceptSessionSize   = 48  // Accept 1, MBZ 1, Port 2, SID 16, MBZ 12, HMAC 16
	startAckSize        = 32  // Accept 1, MBZ 15, HMAC 16
	modeUnauthenticated = 1
	// minCount is the least iteration count RFC 4656 §3.1 allows a greeting to name; unused
	// in unauthenticated mode, but a client may check it.
	minCount = 1024
)

// Commands (RFC 5357 §8.3's registry).
const (
	commandStartSessions    = 2
	commandStopSessions     = 3
	commandRequestTWSession = 5
)

// Accept values (RFC 4656 §3.3).
const (
	acceptOK          = 0
	acceptFailure     = 1 // reason unspecified: how a refused, unplanned peer is told
	acceptInternal    = 2
	acceptUnsupported = 3
)

// greeting is the Server Greeting offering unauthenticated mode only.
func greeting(challenge, salt [16]byte) []byte {
	b := make([]byte, greetingSize)
	binary.BigEndian.PutUint32(b[12:], modeUnauthenticated)
	copy(b[16:32], challenge[:])
	copy(b[32:48], salt[:])
	binary.BigEndian.PutUint32(b[48:], minCount)
	return b
}

// chosenMode is the Mode of a Set-Up-Response; the key, token and IV mean nothing in
// unauthenticated mode.
func chosenMode(b []byte) uint32 { return binary.BigEndian.Uint32(b[:4]) }

// serverStart is the Server-Start: accept, and when this server began.
func serverStart(accept byte, iv [16]byte, started twamp.Timestamp) []byte {
	b := make([]byte, serverStartSize)
	b[15] = accept
	copy(b[16:32], iv[:])
	binary.BigEndian.PutUint64(b[32:], uint64(started))
	return b
}

// request is what the server uses of a Request-TW-Session.
type request struct {
	IPVN           byte
	SenderPort     uint16
	ReceiverPort   uint16
	Sender         netip.Addr // invalid when the field is zero: the control connection's
	Receiver       netip.Addr // likewise
	PaddingBytes   uint32
	Start, Timeout twamp.Timestamp
	TypeP          uint32
}

var errNotRequest = errors.New("not a Request-TW-Session")

// parseRequest reads a Request-TW-Session (RFC 5357 §3.5): Command, MBZ|IPVN, Conf-Sender,
// Conf-Receiver (1 each), Number of Schedule Slots, Number of Packets (4 each), Sender and
// Receiver Port (2 each), Sender and Receiver Address (16 each), SID 16, Padding Length 4,
// Start Time 8, Timeout 8, Type-P Descriptor 4, MBZ 8, HMAC 16.
func parseRequest(b []byte) (request, error) {
	if len(b) != requestSessionSize || b[0] != commandRequestTWSession {
		return request{}, errNotRequest
	}
	r := request{
		IPVN:         b[1] & 0x0f,
		SenderPort:   binary.BigEndian.Uint16(b[12:]),
		ReceiverPort: binary.BigEndian.Uint16(b[14:]),
		PaddingBytes: binary.BigEndian.Uint32(b[64:]),
		Start:        twamp.Timestamp(binary.BigEndian.Uint64(b[68:])),
		Timeout:      twamp.Timestamp(binary.BigEndian.Uint64(b[76:])),
		TypeP:        binary.BigEndian.Uint32(b[84:]),
	}
	switch r.IPVN {
	case 4:
		r.Sender, r.Receiver = addr4(b[16:20]), addr4(b[32:36])
	case 6:
		r.Sender, r.Receiver = addr6(b[16:32]), addr6(b[32:48])
	default:
		return r, fmt.Errorf("IPVN %d is neither 4 nor 6", r.IPVN)
	}
	return r, nil
}

// addr4 and addr6 read an address field; zero is no address (RFC 5357 §3.5: then the test
// packets use the control connection's addresses).
func addr4(b []byte) netip.Addr {
	a := netip.AddrFrom4([4]byte(b))
	if a.IsUnspecified() {
		return netip.Addr{}
	}
	return a
}

func addr6(b []byte) netip.Addr {
	a := netip.AddrFrom16([16]byte(b)).Unmap()
	if a.IsUnspecified() {
		return netip.Addr{}
	}
	return a
}

// acceptSession is the Accept-Session: the port the test packets go to, and the SID.
func acceptSession(accept byte, port uint16, sid [16]byte) []byte {
	b := make([]byte, acceptSessionSize)
	b[0] = accept
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[4:20], sid[:])
	return b
}

// sessionID is a SID as RFC 4656 §3.5 builds one: an IPv4 address of this host (or an IPv6
// address's last four octets), a timestamp and four random octets.
func sessionID(local netip.Addr, at twamp.Timestamp, random [4]byte) [16]byte {
	var sid [16]byte
	raw := local.Unmap().As16()
	copy(sid[0:4], raw[12:16])
	binary.BigEndian.PutUint64(sid[4:12], uint64(at))
	copy(sid[12:16], random[:])
	return sid
}

// startAck is the Start-Ack.
func startAck(accept byte) []byte {
	b := make([]byte, startAckSize)
	b[0] = accept
	return b
}

// stopSessions reads a Stop-Sessions (RFC 5357 §3.8): Command 1, Accept 1, MBZ 2, Number
// of Sessions 4, MBZ 8, HMAC 16.
func stopSessions(b []byte) (accept byte, sessions uint32) {
	return b[1], binary.BigEndian.Uint32(b[4:])
}
