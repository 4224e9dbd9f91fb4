package twamp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// unhex is a packet written out by hand, a field a line: the hex digits up to a "--" and
// the field's name after it.
func unhex(t *testing.T, text string) []byte {
	t.Helper()
	var digits strings.Builder
	for _, line := range strings.Split(text, "\n") {
		field, _, _ := strings.Cut(line, "--")
		digits.WriteString(strings.Join(strings.Fields(field), ""))
	}
	data, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTimestampsAreNTPSecondsSince1900AndBinaryFractions(t *testing.T) {
	// 1970-01-01 is 2,208,988,800 s after NTP's epoch; half a second is 2^31 units.
	if got := TimestampOf(time.Unix(0, 500_000_000)); got != Timestamp(2208988800<<32|1<<31) {
		t.Fatalf("%x", uint64(got))
	}
	at := time.Date(2026, 12, 4, 19, 0, 0, 123_456_789, time.UTC)
	back := TimestampOf(at).Time()
	if diff := back.Sub(at); diff < -time.Nanosecond || diff > time.Nanosecond {
		t.Fatalf("%v -> %v", at, back)
	}
	// The last nanosecond of a second stays in it (2^32 - 4 units; a unit is 0.23 ns).
	if got := TimestampOf(time.Unix(10, 999_999_999)); got != Timestamp((2208988800+10)<<32|0xfffffffc) {
		t.Fatalf("%x", uint64(got))
	}
}

func TestErrorEstimatesNeverClaimBetterThanTheyKnow(t *testing.T) {
	for _, c := range []struct {
		synced bool
		err    time.Duration
		want   ErrorEstimate
	}{
		// 1 unit of 2^-32 s: scale 0, multiplier 1, S set.
		{true, 0, 0x8001},
		// 1 ms = 4,294,967.3 units: scale 15 (32,768 units) times 132 = 4,325,376 >= it.
		{true, time.Millisecond, 0x8000 | 15<<8 | 132},
		// 10 ms unsynchronized: scale 18 (262,144) times 164 = 42,991,616 units = 10.0098 ms.
		{false, 10 * time.Millisecond, 18<<8 | 164},
	} {
		got := NewErrorEstimate(c.synced, c.err)
		if got != c.want || got.Synced() != c.synced || !got.Valid() || got.Error() < c.err {
			t.Errorf("%v %v: %#04x (%v), want %#04x", c.synced, c.err, uint16(got), got.Error(), uint16(c.want))
		}
	}
	// A clock a thousand hours off still has an estimate that covers it.
	if got := NewErrorEstimate(false, 1000*time.Hour); got.Error() < 1000*time.Hour || got.Synced() {
		t.Fatalf("%#04x: %v", uint16(got), got.Error())
	}
	if ErrorEstimate(0x8000).Valid() || ErrorEstimate(0x4001).Valid() {
		t.Fatal("a zero multiplier or the Z bit is not an estimate this reads")
	}
}

func TestASenderPacketIsRFC4656sLayout(t *testing.T) {
	packet := SenderPacket{Seq: 7, Sent: Timestamp(0xE7A1B2C3_80000000), Error: 0x8001}
	got, err := packet.Marshal(ReflectorHeaderSize)
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		00000007          -- sequence number
		E7A1B2C3 80000000 -- timestamp
		8001              -- error estimate: S, scale 0, multiplier 1
		000000000000000000000000000000000000000000000000000000 -- padding to 41 bytes`)
	if !bytes.Equal(got, want) {
		t.Fatalf("\n got %x\nwant %x", got, want)
	}
	parsed, err := ParseSenderPacket(got)
	if err != nil || parsed != packet {
		t.Fatalf("%+v %v", parsed, err)
	}
}

func TestAReflectorPacketIsRFC5357sLayout(t *testing.T) {
	packet := ReflectorPacket{
		Seq: 3, Sent: 0x11111111_22222222, Error: 0x80FF, Received: 0x33333333_44444444,
		SenderSeq: 9, SenderSent: 0x55555555_66666666, SenderError: 0x0102, SenderTTL: 254,
	}
	got, err := packet.Marshal(48)
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, `
		00000003          -- sequence number
		11111111 22222222 -- timestamp
		80FF              -- error estimate
		0000              -- MBZ
		33333333 44444444 -- receive timestamp
		00000009          -- sender sequence number
		55555555 66666666 -- sender timestamp
		0102              -- sender error estimate
		0000              -- MBZ
		FE                -- sender TTL
		00000000000000    -- padding to 48 bytes`)
	if !bytes.Equal(got, want) {
		t.Fatalf("\n got %x\nwant %x", got, want)
	}
	parsed, err := ParseReflectorPacket(got)
	if err != nil || parsed != packet {
		t.Fatalf("%+v %v", parsed, err)
	}
}

func TestMalformedPacketsAreRefusedClearly(t *testing.T) {
	if _, err := ParseSenderPacket(make([]byte, 13)); !errors.Is(err, ErrShort) {
		t.Fatalf("13 bytes: %v", err)
	}
	if _, err := ParseReflectorPacket(make([]byte, 37)); !errors.Is(err, ErrShort) {
		t.Fatalf("37 bytes: %v", err)
	}
	if _, err := (SenderPacket{}).Marshal(13); err == nil {
		t.Fatal("a sender packet under its header")
	}
	if _, err := (ReflectorPacket{}).Marshal(MaxPacketSize + 1); err == nil {
		t.Fatal("a reflector packet over the largest size")
	}
	// Nonzero MBZ and padding are read past, as RFC 5357 asks only the writer to zero them.
	raw := bytes.Repeat([]byte{0xFF}, ReflectorHeaderSize)
	if parsed, err := ParseReflectorPacket(raw); err != nil || parsed.SenderTTL != 0xFF {
		t.Fatalf("%+v %v", parsed, err)
	}
	// An answer cut after the Sender Error Estimate, as twampy's reflector sends: every
	// timestamp read, the TTL unknown.
	cut, _ := ReflectorPacket{Seq: 3, SenderSeq: 9, SenderSent: 77, SenderTTL: 250}.Marshal(ReflectorHeaderSize)
	if parsed, err := ParseReflectorPacket(cut[:38]); err != nil || parsed.SenderSeq != 9 || parsed.SenderSent != 77 || parsed.SenderTTL != 0 {
		t.Fatalf("38 bytes: %+v %v", parsed, err)
	}
}
