package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-net/fathom/agents/internal/result"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// hopView is a hop as a line of text: each probe as "address/rtt[flag]" or "*".
func hopView(hop result.TraceHop) string {
	parts := []string{}
	for _, p := range hop.Probes {
		if p.Address == nil {
			parts = append(parts, "*")
			continue
		}
		s := *p.Address
		if p.RTTMs != nil {
			s += "/" + strconv.FormatFloat(*p.RTTMs, 'f', -1, 64)
		}
		parts = append(parts, s+p.Flag)
	}
	return strings.Join(parts, " ")
}

func TestParseOutputs(t *testing.T) {
	cases := []struct {
		file        string
		destination string
		maxHops     int
		reached     bool
		hops        []string // by TTL; "" skips the check of that hop
	}{
		{"loopback-q1.txt", "127.0.0.1", 30, true, []string{"127.0.0.1/0.037"}},
		{"loopback-q3.txt", "127.0.0.1", 30, true, []string{"127.0.0.1/0.011 127.0.0.1/0.008 127.0.0.1/0.006"}},
		{"loopback-ipv6.txt", "::1", 30, true, []string{"::1/0.022 ::1/0.008"}},
		{"loopback-silent-port.txt", "127.0.0.1", 4, false, []string{"* *", "* *", "* *", "* *"}},
		{"loopback-sport-in-use.txt", "127.0.0.1", 3, false, []string{}},
		{"slac-uvic-seed004.txt", "134.79.86.55", 30, true, []string{
			"142.104.21.62/0.334 142.104.21.62/0.175 142.104.21.62/0.166", "", "", "", "", "", "", "", "", "",
			"192.68.191.149/63.736 192.68.191.149/63.531 192.68.191.149/63.843", "* * *",
			"134.79.86.55/63.684 134.79.86.55/63.52 134.79.86.55/63.431"}},
		{"ecmp-several-addresses.txt", "198.18.4.2", 30, true, []string{
			"", "", "* 203.0.113.17/7.731 *",
			"203.0.113.33/7.802 203.0.113.37/11.934 203.0.113.33/7.795",
			"203.0.113.65/11.911 203.0.113.65/11.987 203.0.113.69/7.844", ""}},
		{"unreachable-flags.txt", "198.18.9.20", 30, false, []string{
			"", "", "192.0.2.77/9.312!H 192.0.2.77/9.287!H 192.0.2.77/9.301!H"}},
		{"network-unreachable-mixed.txt", "198.18.77.1", 30, false, []string{"", "", "192.0.2.14/3.955!N"}},
		{"stars-to-max-hops.txt", "198.18.20.2", 8, false, []string{"", "192.0.2.1/2.114 192.0.2.1/2.098", "* *", "", "", "", "", "* *"}},
		// Captured here with Debian traceroute 2.1.2 on loopback (names, UDP with a fixed
		// source port, IPv6, ICMP and TCP methods).
		{"debian-2.1.2-names-q3.txt", "127.0.0.1", 30, true, []string{"127.0.0.1/0.01 127.0.0.1/0.002 127.0.0.1/0.001"}},
		{"debian-2.1.2-n-udp-sport.txt", "127.0.0.1", 30, true, []string{"127.0.0.1/0.011"}},
		{"debian-2.1.2-ipv6-n-q3.txt", "::1", 30, true, []string{"::1/0.019 ::1/0.002 ::1/0.002"}},
		{"debian-2.1.2-n-icmp.txt", "127.0.0.1", 30, true, []string{"127.0.0.1/0.012 127.0.0.1/0.002 127.0.0.1/0.002"}},
		{"debian-2.1.2-n-tcp.txt", "127.0.0.1", 30, true, []string{"127.0.0.1/0.018 127.0.0.1/0.003 127.0.0.1/0.003"}},
		// -e (MPLS label stacks) and -A (AS numbers) print extra tokens the parser passes over.
		{"mpls-extensions.txt", "198.18.40.2", 30, true, []string{"",
			"192.0.2.1/7.734 192.0.2.1/7.695 192.0.2.1/7.663", "192.0.2.5/7.445 192.0.2.5/7.434 192.0.2.5/7.395",
			"192.0.2.9/7.362 192.0.2.9/7.324 192.0.2.13/11.52", ""}},
		{"as-lookups-names.txt", "198.18.40.2", 30, true, []string{"198.18.1.1/0.412 198.18.1.1/0.388 198.18.1.1/0.377", "",
			"192.0.2.77/9.312 192.0.2.78/9.287 192.0.2.78/9.301", "198.18.40.2/9.603 198.18.40.2/9.588 198.18.40.2/9.611"}},
		{"flags-and-wrapped-line.txt", "2001:db8:20::2", 30, true, []string{"",
			"2001:db8:ffff::1/3.101!F-1480 2001:db8:ffff::1/3.087 2001:db8:ffff::1/3.09",
			"2001:db8:ffff::21/15.21 2001:db8:ffff::25/19.874 2001:db8:ffff::21/15.199",
			"2001:db8:ffff::41/19.902!X 2001:db8:ffff::41/19.877!X 2001:db8:ffff::45/15.301!10", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			p, err := Parse(readTestdata(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if p.Destination != tc.destination || p.MaxHops != tc.maxHops || p.Reached != tc.reached || len(p.Hops) != len(tc.hops) {
				t.Fatalf("destination %q max %d reached %v hops %d", p.Destination, p.MaxHops, p.Reached, len(p.Hops))
			}
			for i, want := range tc.hops {
				if p.Hops[i].TTL != i+1 {
					t.Fatalf("hop %d has TTL %d", i, p.Hops[i].TTL)
				}
				if got := hopView(p.Hops[i]); want != "" && got != want {
					t.Errorf("hop %d: %q, want %q", i+1, got, want)
				}
			}
		})
	}
}

// mtuView is each hop's MTU as text ("-" where traceroute noted none).
func mtuView(hops []result.TraceHop) string {
	parts := []string{}
	for _, hop := range hops {
		if hop.MTU == nil {
			parts = append(parts, "-")
		} else {
			parts = append(parts, strconv.Itoa(*hop.MTU))
		}
	}
	return strings.Join(parts, " ")
}

// Captured here with --mtu between lab namespaces: a 9000-byte sender whose router forwards
// onto a 1500-byte link, then the same path at 1500 throughout.
func TestParseReadsThePathMTU(t *testing.T) {
	cases := []struct{ file, mtus, firstHop string }{
		{"debian-2.1.2-mtu-jumbo-to-1500.txt", "9000 1500", "198.18.250.2/0.073"},
		{"debian-2.1.2-mtu-q3.txt", "9000 1500", "198.18.250.2/0.048 198.18.250.2/0.015 198.18.250.2/0.012"},
		{"debian-2.1.2-mtu-1500-throughout.txt", "1500 -", "198.18.250.2/0.046"},
		{"loopback-q1.txt", "-", "127.0.0.1/0.037"},
	}
	for _, tc := range cases {
		p, err := Parse(readTestdata(t, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := mtuView(p.Hops); got != tc.mtus {
			t.Errorf("%s: MTUs %q, want %q", tc.file, got, tc.mtus)
		}
		if got := hopView(p.Hops[0]); got != tc.firstHop {
			t.Errorf("%s: hop 1 %q, want %q (F=N is no probe)", tc.file, got, tc.firstHop)
		}
	}
	// Out of range or malformed notes are not MTUs; of two on one hop the smaller holds.
	out := "traceroute to 10.0.0.9 (10.0.0.9), 30 hops max, 65000 byte packets\n" +
		" 1  10.0.0.1  0.1 ms F=67  0.1 ms F=70000  0.1 ms F=  0.1 ms F=1500x\n" +
		" 2  10.0.0.2  0.2 ms F=9000  0.2 ms F=1400\n" +
		" 3  10.0.0.9  0.3 ms F=99999999999999999999\n"
	p, err := Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if got := mtuView(p.Hops); got != "- 1400 -" {
		t.Errorf("odd notes: MTUs %q, want \"- 1400 -\"", got)
	}
}

func TestFingerprintNamesThePathNotTheTimes(t *testing.T) {
	ecmp, _ := Parse(readTestdata(t, "ecmp-several-addresses.txt"))
	text := "198.18.1.1\n192.0.2.9\n203.0.113.17\n203.0.113.33|203.0.113.37\n203.0.113.65|203.0.113.69\n198.18.4.2\n"
	sum := sha256.Sum256([]byte(text))
	if got, want := Fingerprint(ecmp.Hops), hex.EncodeToString(sum[:])[:16]; got != want {
		t.Fatalf("fingerprint %s, want %s", got, want)
	}
	silent, _ := Parse(readTestdata(t, "loopback-silent-port.txt"))
	sum = sha256.Sum256([]byte("*\n*\n*\n*\n"))
	if got := Fingerprint(silent.Hops); got != hex.EncodeToString(sum[:])[:16] {
		t.Fatalf("all-silent fingerprint %s", got)
	}
	q1, _ := Parse(readTestdata(t, "loopback-q1.txt"))
	q3, _ := Parse(readTestdata(t, "loopback-q3.txt"))
	if Fingerprint(q1.Hops) != Fingerprint(q3.Hops) {
		t.Fatal("the same path with other times or probe counts must keep its fingerprint")
	}
	if Fingerprint(q1.Hops) == Fingerprint(silent.Hops) || len(Fingerprint(nil)) != 16 {
		t.Fatal("different paths share a fingerprint")
	}
}

func TestParseRefusesOtherOutput(t *testing.T) {
	for _, in := range []string{"", "bind: Address already in use\n", "traceroute: unknown host\n", `{"report": {}}`} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrNoHeader) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestParseOddLines(t *testing.T) {
	out := "warning: something\ntraceroute to 10.0.0.9 (10.0.0.9), 30 hops max, 60 byte packets\n" +
		"noise before the first hop\n" +
		" 1  10.0.0.1  NaN ms  1e308 ms  Inf ms  0.5 ms !Q !H junk\n" + // odd times skipped; !Q is no flag
		" 1  10.0.0.1  0.6 ms\n" + // the same hop again: merged
		" 3  10.0.0.3  3.0 ms\n" + // a gap is kept as printed
		"  4.000 ms\n" + // continuation of hop 3
		" 2  10.0.0.2  2.0 ms\n" + // out of order: dropped, with what continues it
		"  5.000 ms\n" +
		"999  10.0.0.9  1.0 ms\n" + // beyond 255: dropped
		" 0  10.0.0.9  1.0 ms\n"
	p, err := Parse([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 2 || p.Hops[0].TTL != 1 || p.Hops[1].TTL != 3 {
		t.Fatalf("hops %+v", p.Hops)
	}
	if got := hopView(p.Hops[0]); got != "10.0.0.1/0.5!H 10.0.0.1/0.6" {
		t.Fatalf("hop 1: %q", got)
	}
	if got := hopView(p.Hops[1]); got != "10.0.0.3/3 10.0.0.3/4" {
		t.Fatalf("hop 3: %q", got)
	}
	if p.Reached {
		t.Fatal("reached without the destination's address")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, file := range files {
		f.Add(readTestdata(f, filepath.Base(file)))
	}
	f.Add([]byte("traceroute to x (1.2.3.4), 1 hops max, 60 byte packets\n 1  1.2.3.4  0.1 ms !F-1500\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		if p.Hops == nil || len(p.Hops) > maxTTL || p.MaxHops < 0 || p.PacketBytes < 0 {
			t.Fatalf("parse %+v", p)
		}
		last := 0
		for _, hop := range p.Hops {
			if hop.TTL <= last || hop.TTL > maxTTL || hop.Probes == nil || len(hop.Probes) > maxProbesPerHop {
				t.Fatalf("hop TTL %d after %d with %d probes", hop.TTL, last, len(hop.Probes))
			}
			last = hop.TTL
			for _, probe := range hop.Probes {
				switch {
				case probe.RTTMs != nil && (*probe.RTTMs < 0 || *probe.RTTMs != *probe.RTTMs || probe.Address == nil):
					t.Fatalf("probe %+v", probe)
				case probe.RTTMs == nil && (probe.Address != nil || probe.Flag != ""):
					t.Fatalf("a probe without a time carries %+v", probe)
				}
			}
		}
		if fp := Fingerprint(p.Hops); len(fp) != 16 {
			t.Fatalf("fingerprint %q", fp)
		}
	})
}
