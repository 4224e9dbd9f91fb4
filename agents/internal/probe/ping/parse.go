package ping

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/result"
)

// Output of ping under LC_ALL=C: iputils (Linux), busybox, and BSD/macOS ping and ping6.
// A reply's source is "address" or "host (address)" and ends in ":" (BSD ping6: ","); an
// IPv6 address is full of colons, so the source runs lazily up to the sequence field that
// follows it. iputils may prefix "[epoch]" (-D) and says icmp_seq (icmp_req before 2013);
// busybox says seq; BSD ping6 says hlim for the hop limit. ICMP errors come as
// "From X icmp_seq=" (the socket's error queue) or "From X: icmp_seq=" (a raw socket).
var (
	replyLine = regexp.MustCompile(
		`^(?:\[(\d+\.\d+)\] )?\d+ bytes from \S.*?[:,] (?:icmp_[rs]eq|seq)=(\d+) (?:ttl|hlim)=(\d+) time=([0-9.]+) ms( \(DUP!\))?`)
	errorLine = regexp.MustCompile(
		`^(?:\[(\d+\.\d+)\] )?From \S+?(?: \([^)]*\))?:? icmp_[rs]eq=(\d+) (.+?)\s*$`)
	timeoutLine = regexp.MustCompile(`^Request timeout for icmp_seq (\d+)`) // macOS
	// iputils: "N received, +D duplicates"; busybox and BSD: "N packets received", busybox
	// "D duplicates" without the plus.
	summaryLine = regexp.MustCompile(
		`^(\d+) packets transmitted, (\d+) (packets )?received(?:, \+?(\d+) duplicates)?(?:, \+(\d+) errors)?`)
	fatalLine = regexp.MustCompile(`^ping6?: (.+)$`)
)

// maxSeq bounds sequence numbers taken from the output, so hostile input cannot make the
// parser allocate without limit.
const maxSeq = 65535

// Run describes how ping was started, to place lost packets in time.
type Run struct {
	Start    time.Time
	Interval time.Duration
	Count    int
}

// Parsed is what one ping run printed.
type Parsed struct {
	Transmitted int
	Received    int
	Duplicates  int
	Errors      int
	Samples     []result.PingSample
	// Summary is false when ping never printed its statistics (it failed or was killed).
	Summary bool
	// Fatal is ping's own error message ("ping: ..."), when it printed one.
	Fatal string
}

type reply struct {
	at    time.Time
	rttMs float64
	ttl   int
}

// Parse reads ping's output. It never fails on odd lines (they are skipped): a measurement
// with an unexpected line is still a measurement. Lost packets get the time they were due.
// iputils numbers packets from 1, busybox and BSD ping from 0; the numbering is told by the
// summary's wording or by a packet 0.
func Parse(out []byte, run Run) Parsed {
	var p Parsed
	replies := map[int][]reply{}
	errs := map[int]string{}
	maxSeen := -1
	zeroBased := false
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := strings.TrimRight(scanner.Text(), "\r")
		switch {
		case replyLine.MatchString(line):
			m := replyLine.FindStringSubmatch(line)
			seq, ok := boundedInt(m[2], maxSeq)
			rtt, err := strconv.ParseFloat(m[4], 64)
			if !ok || err != nil || math.IsInf(rtt, 0) || rtt < 0 {
				continue
			}
			ttl, _ := boundedInt(m[3], 255)
			// A second reply to one sequence number is a duplicate whether or not ping marked it.
			replies[seq] = append(replies[seq], reply{at: epoch(m[1]), rttMs: rtt, ttl: ttl})
			maxSeen = max(maxSeen, seq)
		case errorLine.MatchString(line):
			m := errorLine.FindStringSubmatch(line)
			if seq, ok := boundedInt(m[2], maxSeq); ok {
				if _, seen := errs[seq]; !seen {
					errs[seq] = truncate(m[3], 200)
				}
				maxSeen = max(maxSeen, seq)
			}
		case timeoutLine.MatchString(line):
			if seq, ok := boundedInt(timeoutLine.FindStringSubmatch(line)[1], maxSeq); ok {
				maxSeen = max(maxSeen, seq)
			}
		case summaryLine.MatchString(line):
			m := summaryLine.FindStringSubmatch(line)
			p.Summary = true
			p.Transmitted, _ = boundedInt(m[1], maxSeq)
			p.Errors, _ = boundedInt(m[5], maxSeq)
			zeroBased = zeroBased || m[3] != ""
		case fatalLine.MatchString(line):
			p.Fatal = fatalLine.FindStringSubmatch(line)[1]
		}
	}
	_, replyZero := replies[0]
	_, errorZero := errs[0]
	first := 1
	if zeroBased || replyZero || errorZero {
		first = 0
	}
	if !p.Summary {
		p.Transmitted = max(0, maxSeen-first+1)
	}
	if p.Errors == 0 {
		p.Errors = len(errs)
	}
	p.Samples = make([]result.PingSample, 0, p.Transmitted)
	for seq := first; seq < first+p.Transmitted && seq <= maxSeq; seq++ {
		due := run.due(seq - first)
		got := replies[seq]
		if len(got) == 0 {
			p.Samples = append(p.Samples, result.PingSample{Seq: seq, Time: due.UTC(), Error: errs[seq]})
			continue
		}
		p.Received++
		for i, r := range got {
			rtt, ttl, at := r.rttMs, r.ttl, r.at
			if at.IsZero() {
				at = due.Add(time.Duration(rtt * float64(time.Millisecond)))
			}
			p.Samples = append(p.Samples, result.PingSample{
				Seq: seq, Time: at.UTC(), RTTMs: &rtt, TTL: &ttl, Duplicate: i > 0,
			})
			if i > 0 {
				p.Duplicates++
			}
		}
	}
	return p
}

// due is when the packet sent index-th (from 0) was sent: ping sends one per interval.
func (r Run) due(index int) time.Time {
	return r.Start.Add(time.Duration(index) * r.Interval)
}

func epoch(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	secs, frac, _ := strings.Cut(s, ".")
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || sec < 0 || sec > 1<<40 {
		return time.Time{}
	}
	frac = (frac + "000000000")[:9]
	nsec, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(sec, nsec)
}

func boundedInt(s string, limit int) (int, bool) {
	if s == "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > limit {
		return 0, false
	}
	return n, true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Describe summarises a parse for logs.
func (p Parsed) Describe() string {
	return fmt.Sprintf("%d transmitted, %d received, %d duplicates, %d errors", p.Transmitted, p.Received, p.Duplicates, p.Errors)
}
