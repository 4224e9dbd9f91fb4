// Package twamp is TWAMP-light (RFC 5357, Appendix I): the unauthenticated TWAMP-Test packets
// of a Session-Sender and a Session-Reflector, their timestamps and error estimates, a
// reflector that answers planned peers only, and a sender that measures one-way delay and
// loss in each direction from the reflector's timestamps.
//
// The packet layouts are RFC 5357 section 4.1.2 (the sender's, which is OWAMP's, RFC 4656
// section 4.1.2) and section 4.2.1 (the reflector's), unauthenticated mode; the sender pads
// its packets to the reflector's size so both directions carry the same bytes (RFC 6038).
package twamp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Port is TWAMP's well-known port (IANA "twamp-control" 862); TWAMP-light reflectors are
// usually configured on it or on a port of the operator's choosing.
const Port = 862

// SenderHeaderSize is the unauthenticated Session-Sender packet without its padding:
// sequence number (4), timestamp (8), error estimate (2).
const SenderHeaderSize = 14

// ReflectorHeaderSize is the unauthenticated Session-Reflector packet without its padding:
// sequence number (4), timestamp (8), error estimate (2), MBZ (2), receive timestamp (8),
// sender sequence number (4), sender timestamp (8), sender error estimate (2), MBZ (2),
// sender TTL (1).
const ReflectorHeaderSize = 41

// reflectorMinSize is a Session-Reflector packet up to its Sender Error Estimate: some
// reflectors (Nokia's twampy among them) end their answers there, without the MBZ and
// Sender TTL that RFC 5357 places after it. Such an answer still carries every timestamp;
// only the forward hop count is unknown.
const reflectorMinSize = 38

// MaxPacketSize bounds what either side sends or reads: the largest UDP payload a 1500-byte
// MTU carries over IPv4 without fragments, the latency test's largest size_bytes. Over IPv6
// (40 bytes of header, not 20) the sender's kernel fragments packets above 1452 bytes.
const MaxPacketSize = 1472

// ntpEpochOffset is the seconds from 1900-01-01 (NTP's era 0) to 1970-01-01 (Unix).
const ntpEpochOffset = 2208988800

// Timestamp is an NTP-format timestamp (RFC 4656 section 4.1.2, Z bit 0): seconds since
// 1900 in the high 32 bits, fractions of a second in units of 2^-32 in the low 32.
type Timestamp uint64

// TimestampOf is t in NTP format, rounded to the nearest 2^-32 s.
func TimestampOf(t time.Time) Timestamp {
	seconds := uint64(t.Unix() + ntpEpochOffset)
	// Below 2^32 for any nanosecond count: 999,999,999 ns is 2^32 - 4.3 units.
	fraction := (uint64(t.Nanosecond())<<32 + 500_000_000) / 1_000_000_000
	return Timestamp(seconds<<32 | fraction)
}

// Time is the timestamp as a time (era 0: before 2036-02-07).
func (ts Timestamp) Time() time.Time {
	seconds := int64(ts>>32) - ntpEpochOffset
	nanos := (uint64(ts&0xffffffff)*1_000_000_000 + 1<<31) >> 32
	return time.Unix(seconds, int64(nanos)).UTC()
}

// ErrorEstimate is the 16-bit error estimate of RFC 4656 section 4.1.2: S (the clock is
// synchronized to UTC), Z (0: NTP-format timestamps), a 6-bit Scale and an 8-bit Multiplier;
// the error is Multiplier * 2^(Scale-32) seconds, and Multiplier is never 0.
type ErrorEstimate uint16

const (
	syncBit  = 1 << 15
	zBit     = 1 << 14
	maxScale = 63
)

// NewErrorEstimate is the estimate of a clock synchronized or not, whose error is at most
// err: the smallest scale whose multiplier holds it, rounded up (an estimate never claims
// better than it knows). Any duration fits: scale 63 would say 17,000 years.
func NewErrorEstimate(synced bool, err time.Duration) ErrorEstimate {
	units := math.Ceil(max(err.Seconds(), 0) * (1 << 32)) // in 2^-32 s
	scale, multiplier := 0, units
	for multiplier > 255 && scale < maxScale {
		scale++
		multiplier = math.Ceil(units / math.Exp2(float64(scale)))
	}
	multiplier = min(max(multiplier, 1), 255)
	estimate := ErrorEstimate(scale<<8 | int(multiplier))
	if synced {
		estimate |= syncBit
	}
	return estimate
}

// Synced is the S bit: the sender's clock was synchronized to UTC.
func (e ErrorEstimate) Synced() bool { return e&syncBit != 0 }

// Error is the estimate in time; 0 for a malformed estimate (multiplier 0).
func (e ErrorEstimate) Error() time.Duration {
	multiplier := float64(e & 0xff)
	scale := float64((e >> 8) & 0x3f)
	seconds := multiplier * math.Exp2(scale-32)
	if seconds > math.MaxInt64/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(seconds * 1e9)
}

// Valid is whether the estimate is one RFC 4656 allows here: a multiplier above 0 and Z 0
// (this implementation reads NTP-format timestamps only).
func (e ErrorEstimate) Valid() bool { return e&0xff != 0 && e&zBit == 0 }

// SenderPacket is a Session-Sender's test packet.
type SenderPacket struct {
	Seq   uint32
	Sent  Timestamp
	Error ErrorEstimate
}

// Marshal writes the packet padded with zeros to size bytes (at least SenderHeaderSize).
func (p SenderPacket) Marshal(size int) ([]byte, error) {
	if size < SenderHeaderSize || size > MaxPacketSize {
		return nil, fmt.Errorf("twamp: a sender packet is %d to %d bytes, not %d", SenderHeaderSize, MaxPacketSize, size)
	}
	buf := make([]byte, size)
	binary.BigEndian.PutUint32(buf[0:4], p.Seq)
	binary.BigEndian.PutUint64(buf[4:12], uint64(p.Sent))
	binary.BigEndian.PutUint16(buf[12:14], uint16(p.Error))
	return buf, nil
}

// ErrShort is a packet shorter than its header.
var ErrShort = errors.New("twamp: packet shorter than its header")

// ParseSenderPacket reads a Session-Sender packet; its padding is ignored.
func ParseSenderPacket(buf []byte) (SenderPacket, error) {
	if len(buf) < SenderHeaderSize {
		return SenderPacket{}, fmt.Errorf("%w: %d of %d bytes", ErrShort, len(buf), SenderHeaderSize)
	}
	return SenderPacket{
		Seq:   binary.BigEndian.Uint32(buf[0:4]),
		Sent:  Timestamp(binary.BigEndian.Uint64(buf[4:12])),
		Error: ErrorEstimate(binary.BigEndian.Uint16(buf[12:14])),
	}, nil
}

// ReflectorPacket is a Session-Reflector's answer to one sender packet.
type ReflectorPacket struct {
	Seq         uint32    // the reflector's own count of packets it answered in this session
	Sent        Timestamp // when the reflector sent this answer
	Error       ErrorEstimate
	Received    Timestamp // when the reflector received the sender's packet
	SenderSeq   uint32
	SenderSent  Timestamp
	SenderError ErrorEstimate
	SenderTTL   uint8 // the TTL (hop limit) the sender's packet arrived with
}

// Marshal writes the packet padded with zeros to size bytes (at least ReflectorHeaderSize):
// a reflector answers with as many bytes as it received, where that is at least its header.
func (p ReflectorPacket) Marshal(size int) ([]byte, error) {
	if size < ReflectorHeaderSize || size > MaxPacketSize {
		return nil, fmt.Errorf("twamp: a reflector packet is %d to %d bytes, not %d", ReflectorHeaderSize, MaxPacketSize, size)
	}
	buf := make([]byte, size)
	binary.BigEndian.PutUint32(buf[0:4], p.Seq)
	binary.BigEndian.PutUint64(buf[4:12], uint64(p.Sent))
	binary.BigEndian.PutUint16(buf[12:14], uint16(p.Error))
	// 14:16 MBZ
	binary.BigEndian.PutUint64(buf[16:24], uint64(p.Received))
	binary.BigEndian.PutUint32(buf[24:28], p.SenderSeq)
	binary.BigEndian.PutUint64(buf[28:36], uint64(p.SenderSent))
	binary.BigEndian.PutUint16(buf[36:38], uint16(p.SenderError))
	// 38:40 MBZ
	buf[40] = p.SenderTTL
	return buf, nil
}

// ParseReflectorPacket reads a Session-Reflector packet; its MBZ fields and padding are
// ignored (RFC 5357 asks the sender of a packet to zero them, not its receiver to check), and
// an answer cut after the Sender Error Estimate is read with its Sender TTL unknown (0).
func ParseReflectorPacket(buf []byte) (ReflectorPacket, error) {
	if len(buf) < reflectorMinSize {
		return ReflectorPacket{}, fmt.Errorf("%w: %d of %d bytes", ErrShort, len(buf), ReflectorHeaderSize)
	}
	ttl := uint8(0) // unknown, as a TTL that could not be read
	if len(buf) >= ReflectorHeaderSize {
		ttl = buf[40]
	}
	return ReflectorPacket{
		Seq:         binary.BigEndian.Uint32(buf[0:4]),
		Sent:        Timestamp(binary.BigEndian.Uint64(buf[4:12])),
		Error:       ErrorEstimate(binary.BigEndian.Uint16(buf[12:14])),
		Received:    Timestamp(binary.BigEndian.Uint64(buf[16:24])),
		SenderSeq:   binary.BigEndian.Uint32(buf[24:28]),
		SenderSent:  Timestamp(binary.BigEndian.Uint64(buf[28:36])),
		SenderError: ErrorEstimate(binary.BigEndian.Uint16(buf[36:38])),
		SenderTTL:   ttl,
	}, nil
}
