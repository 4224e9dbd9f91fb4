// Package echo is the UDP echo responder every agent runs for peers' flow sweeps, and the
// packet format both ends share. The responder answers only well-formed Fathom requests, with
// a reply exactly as long as the request and marked as a reply: it can neither amplify
// traffic toward a spoofed source nor be made to answer another echo responder forever.
package echo

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// DefaultPort is where agents listen unless configured otherwise (iperf3 has 5201).
const DefaultPort = 5202

// Magics open every packet. Requests and replies differ so that a reply, even bounced back
// to a responder by a spoofed source, is never answered.
const (
	RequestMagic = "FATHMEQ1"
	ReplyMagic   = "FATHMER1"
)

// Packet layout (big endian): magic [8] | round uint32 | flow uint16 | seq uint16 |
// sent_ns int64 | padding up to MaxLen.
const (
	HeaderLen = 24
	// MaxLen is the longest packet the responder answers; anything longer is dropped, so
	// the responder's output is bounded by a small packet per request.
	MaxLen = 128
)

// Packet is one probe or its echo.
type Packet struct {
	Reply bool
	// Round identifies one sweep, so an answer from an earlier sweep is never counted.
	Round uint32
	Flow  uint16
	Seq   uint16
	// SentNs is the prober's monotonic send time (ns since its sweep began); only the
	// prober reads it.
	SentNs int64
}

// Errors of Decode.
var (
	ErrShort    = errors.New("echo: packet shorter than the header")
	ErrLong     = fmt.Errorf("echo: packet longer than %d bytes", MaxLen)
	ErrNotFathm = errors.New("echo: not a Fathom echo packet")
)

// Marshal encodes p, zero-padded to size bytes (at least HeaderLen, at most MaxLen).
func (p Packet) Marshal(size int) []byte {
	size = min(max(size, HeaderLen), MaxLen)
	b := make([]byte, size)
	if p.Reply {
		copy(b, ReplyMagic)
	} else {
		copy(b, RequestMagic)
	}
	binary.BigEndian.PutUint32(b[8:], p.Round)
	binary.BigEndian.PutUint16(b[12:], p.Flow)
	binary.BigEndian.PutUint16(b[14:], p.Seq)
	binary.BigEndian.PutUint64(b[16:], uint64(p.SentNs))
	return b
}

// Decode reads a request or a reply; anything else is an error.
func Decode(b []byte) (Packet, error) {
	switch {
	case len(b) < HeaderLen:
		return Packet{}, ErrShort
	case len(b) > MaxLen:
		return Packet{}, ErrLong
	}
	var p Packet
	switch string(b[:8]) {
	case RequestMagic:
	case ReplyMagic:
		p.Reply = true
	default:
		return Packet{}, ErrNotFathm
	}
	p.Round = binary.BigEndian.Uint32(b[8:])
	p.Flow = binary.BigEndian.Uint16(b[12:])
	p.Seq = binary.BigEndian.Uint16(b[14:])
	p.SentNs = int64(binary.BigEndian.Uint64(b[16:]))
	return p, nil
}

// Answer turns a request into its reply in place: the same bytes and length with the reply
// magic. It reports false, leaving req alone, for anything that is not a request.
func Answer(req []byte) bool {
	p, err := Decode(req)
	if err != nil || p.Reply {
		return false
	}
	copy(req, ReplyMagic)
	return true
}
