package ping

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseRealOutputs(t *testing.T) {
	type want struct {
		summary                                   bool
		transmitted, received, duplicates, errors int
		firstRTTMs                                float64 // -1: first packet lost
		fatal                                     string
		samples                                   int
	}
	cases := map[string]want{
		"loopback-5.txt":                   {true, 5, 5, 0, 0, 0.072, "", 5},
		"loopback-size1400.txt":            {true, 3, 3, 0, 0, 0.016, "", 3},
		"loopback-no-timestamps.txt":       {true, 3, 3, 0, 0, 0.014, "", 3},
		"veth-ok.txt":                      {true, 6, 6, 0, 0, 0.056, "", 6},
		"ttl1.txt":                         {true, 3, 3, 0, 0, 0.027, "", 3},
		"queued-during-outage.txt":         {true, 12, 12, 0, 0, 0.061, "", 12},
		"all-lost.txt":                     {true, 4, 0, 0, 0, -1, "", 4},
		"unreachable-neighbour-errors.txt": {true, 6, 0, 0, 3, -1, "", 6},
		"crafted-loss-and-duplicate.txt":   {true, 5, 4, 1, 0, 7.81, "", 6},
		"crafted-old-icmp-req.txt":         {true, 2, 2, 0, 0, 0.512, "", 2},
		"network-unreachable.txt":          {false, 0, 0, 0, 0, -1, "connect: Network is unreachable", 0},
		"unknown-host.txt":                 {false, 0, 0, 0, 0, -1, "no-such-host.invalid: Temporary failure in name resolution", 0},
		// IPv6 replies: the address itself holds colons.
		"iputils-20221126-ipv6-loopback.txt":      {true, 5, 5, 0, 0, 0.032, "", 5},
		"iputils-20221126-ipv6-no-timestamps.txt": {true, 3, 3, 0, 0, 0.012, "", 3},
		"iputils-20221126-ipv6-size1400.txt":      {true, 3, 3, 0, 0, 0.013, "", 3},
		"iputils-ipv6-link-local.txt":             {true, 2, 2, 0, 0, 0.061, "", 2},
		"iputils-ipv6-name-errors.txt":            {true, 5, 3, 1, 2, 12.4, "", 6},
		// Without -n: "host (address)", and ICMP errors from a router as "From host (address): ".
		"iputils-20221126-name-ipv4.txt": {true, 3, 3, 0, 0, 0.060, "", 3},
		"iputils-errors-named-colon.txt": {true, 4, 2, 0, 2, 4.21, "", 4},
		// busybox and BSD/macOS number from 0 and say "N packets received".
		"busybox-ipv4.txt":                {true, 3, 3, 0, 0, 0.123, "", 3},
		"busybox-ipv6-loss-duplicate.txt": {true, 4, 3, 1, 0, 0.412, "", 5},
		"macos-ipv4-timeout.txt":          {true, 4, 3, 0, 0, 7.812, "", 4},
		"freebsd-ipv4-duplicate.txt":      {true, 3, 3, 1, 0, 7.812, "", 4},
		"bsd-ping6.txt":                   {true, 3, 3, 0, 0, 12.418, "", 3},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			p := Parse(readTestdata(t, name), Run{Start: start, Interval: time.Second, Count: w.transmitted})
			if p.Summary != w.summary || p.Transmitted != w.transmitted || p.Received != w.received ||
				p.Duplicates != w.duplicates || p.Errors != w.errors || p.Fatal != w.fatal || len(p.Samples) != w.samples {
				t.Fatalf("got summary=%v %s fatal=%q samples=%d, want %+v", p.Summary, p.Describe(), p.Fatal, len(p.Samples), w)
			}
			if len(p.Samples) == 0 {
				return
			}
			first := p.Samples[0]
			switch {
			case w.firstRTTMs < 0 && first.RTTMs != nil:
				t.Fatalf("first sample should be lost, got %v ms", *first.RTTMs)
			case w.firstRTTMs >= 0 && (first.RTTMs == nil || *first.RTTMs != w.firstRTTMs):
				t.Fatalf("first RTT = %v, want %v", first.RTTMs, w.firstRTTMs)
			}
		})
	}
}

func TestParseKeepsPrintedRoundingAndEpochTimes(t *testing.T) {
	p := Parse(readTestdata(t, "queued-during-outage.txt"), Run{Start: start, Interval: 200 * time.Millisecond})
	// ping prints whole ms above 100 ms and one decimal below: 1031 ms, 12.0 ms.
	if got := *p.Samples[4].RTTMs; got != 1031 {
		t.Fatalf("seq 5 RTT = %v, want 1031", got)
	}
	if got := *p.Samples[9].RTTMs; got != 12.0 {
		t.Fatalf("seq 10 RTT = %v, want 12.0", got)
	}
	want := time.Unix(1795368111, 124070000).UTC()
	if !p.Samples[0].Time.Equal(want) {
		t.Fatalf("seq 1 time = %v, want the -D epoch %v", p.Samples[0].Time, want)
	}
	if *p.Samples[0].TTL != 64 {
		t.Fatalf("ttl = %d", *p.Samples[0].TTL)
	}
}

func TestParseLostPacketsGetTheirDueTimeAndICMPErrors(t *testing.T) {
	p := Parse(readTestdata(t, "unreachable-neighbour-errors.txt"), Run{Start: start, Interval: time.Second})
	if p.Samples[0].Error != "" || p.Samples[1].Error != "Destination Host Unreachable" {
		t.Fatalf("errors: %q %q", p.Samples[0].Error, p.Samples[1].Error)
	}
	if !p.Samples[2].Time.Equal(start.Add(2 * time.Second)) {
		t.Fatalf("seq 3 due at %v", p.Samples[2].Time)
	}
}

func TestParseICMPErrorsFromIPv6AndNamedRouters(t *testing.T) {
	cases := map[string][]string{
		"iputils-ipv6-name-errors.txt":   {"", "Destination unreachable: Address unreachable", "", "Time exceeded: Hop limit", "", ""},
		"iputils-errors-named-colon.txt": {"", "Time to live exceeded", "Time to live exceeded", ""},
	}
	for name, want := range cases {
		p := Parse(readTestdata(t, name), Run{Start: start, Interval: time.Second})
		got := []string{}
		for _, s := range p.Samples {
			got = append(got, s.Error)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: errors %q, want %q", name, got, want)
		}
	}
	p := Parse([]byte("From ::1 icmp_seq=1 Destination unreachable: Port unreachable\n"), Run{Start: start, Interval: time.Second})
	if len(p.Samples) != 1 || p.Samples[0].Error != "Destination unreachable: Port unreachable" {
		t.Errorf("error from ::1: %+v", p.Samples)
	}
}

func TestParseZeroBasedSequencesOfBusyboxAndBSD(t *testing.T) {
	p := Parse(readTestdata(t, "busybox-ipv6-loss-duplicate.txt"), Run{Start: start, Interval: time.Second})
	view := []string{}
	for _, s := range p.Samples {
		rtt := "lost"
		if s.RTTMs != nil {
			rtt = strconv.FormatFloat(*s.RTTMs, 'f', -1, 64)
		}
		view = append(view, fmt.Sprintf("%d:%s:%v", s.Seq, rtt, s.Duplicate))
	}
	if got := strings.Join(view, " "); got != "0:0.412:false 1:lost:false 2:0.398:false 2:0.611:true 3:0.405:false" {
		t.Fatalf("samples %s", got)
	}
	// Without -D the first packet is due at the start and the lost one an interval later.
	if !p.Samples[1].Time.Equal(start.Add(time.Second)) {
		t.Fatalf("seq 1 due at %v", p.Samples[1].Time)
	}
	bsd := Parse(readTestdata(t, "macos-ipv4-timeout.txt"), Run{Start: start, Interval: time.Second})
	if bsd.Samples[0].Seq != 0 || bsd.Samples[1].RTTMs != nil || *bsd.Samples[3].TTL != 60 {
		t.Fatalf("macOS samples %+v", bsd.Samples)
	}
	// A run cut short, with no summary: counted from what was printed.
	cut := Parse([]byte("64 bytes from 10.0.0.1: seq=0 ttl=64 time=0.1 ms\n64 bytes from 10.0.0.1: seq=1 ttl=64 time=0.2 ms\n"), Run{Start: start, Interval: time.Second})
	if cut.Summary || cut.Transmitted != 2 || cut.Received != 2 {
		t.Fatalf("cut run: %s", cut.Describe())
	}
}

func TestParseDuplicatesFollowTheirOriginal(t *testing.T) {
	p := Parse(readTestdata(t, "crafted-loss-and-duplicate.txt"), Run{Start: start, Interval: time.Second})
	seqs := []int{}
	dups := []bool{}
	for _, s := range p.Samples {
		seqs = append(seqs, s.Seq)
		dups = append(dups, s.Duplicate)
	}
	if len(seqs) != 6 || seqs[2] != 2 || !dups[2] || dups[1] || seqs[3] != 3 || p.Samples[3].RTTMs != nil {
		t.Fatalf("seqs %v dups %v", seqs, dups)
	}
	if got := *p.Samples[4].RTTMs; got != 311 {
		t.Fatalf("seq 4 = %v", got)
	}
}

func TestParseMalformedInput(t *testing.T) {
	cases := []string{
		"",
		"garbage\n\x00\xff",
		"[notanumber] 64 bytes from x: icmp_seq=1 ttl=64 time=1.0 ms",
		"64 bytes from x: icmp_seq=99999999999999999999 ttl=64 time=1.0 ms",
		"64 bytes from x: icmp_seq=1 ttl=64 time=1.2.3 ms",
		"99999999 packets transmitted, 0 received, 100% packet loss",
		"3 packets transmitted, 9 received, 0% packet loss",
	}
	for _, in := range cases {
		p := Parse([]byte(in), Run{Start: start, Interval: time.Second})
		if p.Transmitted > maxSeq || len(p.Samples) > maxSeq || p.Received > p.Transmitted {
			t.Fatalf("%q: %s", in, p.Describe())
		}
	}
}

func FuzzParse(f *testing.F) {
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join("testdata", e.Name())); err == nil && !e.IsDir() {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parse(data, Run{Start: start, Interval: time.Second})
		if p.Received > p.Transmitted || len(p.Samples) < p.Transmitted || p.Transmitted > maxSeq {
			t.Fatalf("inconsistent parse: %s, %d samples", p.Describe(), len(p.Samples))
		}
		if p.Transmitted < 0 || p.Received < 0 || p.Duplicates < 0 || p.Errors < 0 {
			t.Fatalf("negative count: %s", p.Describe())
		}
		for _, s := range p.Samples {
			if s.Seq < 0 || s.Seq > maxSeq || (s.RTTMs != nil && *s.RTTMs < 0) || (s.TTL != nil && (*s.TTL < 0 || *s.TTL > 255)) {
				t.Fatalf("sample %+v", s)
			}
		}
	})
}
