// Package doctor says whether this host is ready to be a Fathom agent and what to fix: one
// line per check with a verdict. `fathom-agent doctor` exits non-zero when a check fails; a
// warning is something that will limit what Fathom measures, not stop it.
//
// Every way the checks touch the host is a field of Host, so tests give them a fake one.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
)

// Verdict is a check's outcome.
type Verdict string

// The verdicts, from best to worst.
const (
	OK   Verdict = "ok"
	Skip Verdict = "skip" // could not be judged here (say why)
	Warn Verdict = "warn"
	Fail Verdict = "fail"
)

// Result is one line of the report.
type Result struct {
	Check   string
	Verdict Verdict
	Detail  string
}

// Host is what the checks read. Run returns a command's combined output and its error.
type Host struct {
	LookPath  func(file string) (string, error)
	Run       func(ctx context.Context, name string, args ...string) (string, error)
	ReadFile  func(path string) ([]byte, error)
	HTTP      *http.Client
	Now       func() time.Time
	LocalAddr func(ctx context.Context, remote string) (net.IP, error) // the source address towards remote
	MTUOf     func(ip net.IP) (string, int, error)                     // the interface holding ip, its MTU
	Listen    func(address string) (io.Closer, error)
	// ClockState is the kernel's NTP state of this host's clock.
	ClockState hostclock.Reader
}

// Options are what the report is judged against.
type Options struct {
	Server     string        // the Fathom server URL; "" skips the checks that need it
	Iperf3Port int           // the port the agent's iperf3 server will listen on
	PathRTT    time.Duration // the longest path's RTT the buffers must cover
	GoalBps    float64       // the rate one flow should reach on that path
}

// Minimum versions of the tools, for the options the agent passes them.
const (
	minIperf3Major, minIperf3Minor = 3, 7 // --connect-timeout
	minTracerouteMajor             = 2    // --mtu, --sport (Debian's traceroute)
	// An HTTP Date header resolves one second: offsets below this are not told apart.
	clockFailAfter = 2 * time.Second
)

// Check runs every check in order.
func Check(ctx context.Context, host Host, opts Options) []Result {
	return []Result{
		iperf3(ctx, host),
		traceroute(ctx, host),
		ping(ctx, host),
		iperf3Port(host, opts.Iperf3Port),
		buffers(host, opts),
		clock(ctx, host, opts.Server),
		clockSync(host),
		mtu(ctx, host, opts.Server),
	}
}

// Failed reports whether any check failed.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Verdict == Fail {
			return true
		}
	}
	return false
}

// Write prints one aligned line per result.
func Write(w io.Writer, results []Result) {
	width := 0
	for _, r := range results {
		width = max(width, len(r.Check))
	}
	for _, r := range results {
		fmt.Fprintf(w, "%-4s  %-*s  %s\n", r.Verdict, width, r.Check, r.Detail)
	}
}

var (
	iperfVersion     = regexp.MustCompile(`iperf (\d+)\.(\d+)`)
	tracerouteVesion = regexp.MustCompile(`version (\d+)\.(\d+)`)
)

func iperf3(ctx context.Context, host Host) Result {
	const name = "iperf3"
	if _, err := host.LookPath("iperf3"); err != nil {
		return Result{name, Fail, "not found: install iperf3 (3.7 or newer)"}
	}
	out, _ := host.Run(ctx, "iperf3", "--version")
	m := iperfVersion.FindStringSubmatch(out)
	if m == nil {
		return Result{name, Fail, "`iperf3 --version` printed no version: " + firstLine(out)}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	version := m[1] + "." + m[2]
	if major < minIperf3Major || (major == minIperf3Major && minor < minIperf3Minor) {
		return Result{name, Fail, fmt.Sprintf("%s is too old: the agent needs 3.7 or newer (--connect-timeout)", version)}
	}
	if !strings.Contains(out, "authentication") {
		return Result{name, Warn, version + " without authentication: the agent's iperf3 server cannot require a planned peer's key"}
	}
	return Result{name, OK, version + " with authentication"}
}

func traceroute(ctx context.Context, host Host) Result {
	const name = "traceroute"
	if _, err := host.LookPath("traceroute"); err != nil {
		return Result{name, Fail, "not found: install Debian's traceroute (2.0 or newer)"}
	}
	out, _ := host.Run(ctx, "traceroute", "--version")
	m := tracerouteVesion.FindStringSubmatch(out)
	if m == nil {
		return Result{name, Fail, "not the Linux traceroute 2.x the agent drives (--mtu, --sport): " + firstLine(out)}
	}
	if major, _ := strconv.Atoi(m[1]); major < minTracerouteMajor {
		return Result{name, Fail, fmt.Sprintf("%s.%s is too old: the agent needs 2.0 or newer (--mtu, --sport)", m[1], m[2])}
	}
	return Result{name, OK, m[1] + "." + m[2]}
}

// ping sends one echo to loopback: that it can open its socket is the permission probes need.
func ping(ctx context.Context, host Host) Result {
	const name = "ping"
	if _, err := host.LookPath("ping"); err != nil {
		return Result{name, Fail, "not found: install iputils-ping"}
	}
	if out, err := host.Run(ctx, "ping", "-n", "-c", "1", "-W", "2", "127.0.0.1"); err != nil {
		return Result{name, Fail, "cannot send an echo (" + firstLine(out) + "): run with CAP_NET_RAW, as the fathom-agent unit does"}
	}
	return Result{name, OK, "can open its socket (one echo to 127.0.0.1)"}
}

func iperf3Port(host Host, port int) Result {
	const name = "iperf3 port"
	if port <= 0 {
		return Result{name, Skip, "no iperf3 server configured"}
	}
	listener, err := host.Listen(net.JoinHostPort("", strconv.Itoa(port)))
	if err != nil {
		// A running agent holds it itself, so this cannot fail the host.
		return Result{name, Warn, fmt.Sprintf("cannot listen on TCP %d (%v): the running agent or another service holds it", port, err)}
	}
	_ = listener.Close()
	return Result{name, OK, fmt.Sprintf("TCP %d is free; peers must reach it through any firewall (their failed tests say so)", port)}
}

// buffers judges the TCP buffer maxima as the window they allow one flow: rate = window / RTT.
func buffers(host Host, opts Options) Result {
	const name = "tcp buffers"
	rmem, err1 := sysctlMax(host, "/proc/sys/net/ipv4/tcp_rmem")
	wmem, err2 := sysctlMax(host, "/proc/sys/net/ipv4/tcp_wmem")
	if err1 != nil || err2 != nil {
		return Result{name, Skip, "cannot read net.ipv4.tcp_rmem and tcp_wmem"}
	}
	window := min(rmem, wmem)
	rtt := opts.PathRTT.Seconds()
	if rtt <= 0 || opts.GoalBps <= 0 {
		return Result{name, Skip, "no path RTT or goal rate to judge against"}
	}
	ceiling := float64(window) * 8 / rtt
	detail := fmt.Sprintf("tcp_rmem max %s, tcp_wmem max %s: one flow reaches about %s at %s",
		mib(rmem), mib(wmem), rate(ceiling), opts.PathRTT)
	if ceiling < opts.GoalBps {
		need := int64(opts.GoalBps * rtt / 8)
		var short []string
		for _, s := range []struct {
			name string
			max  int64
		}{{"net.ipv4.tcp_rmem", rmem}, {"net.ipv4.tcp_wmem", wmem}} {
			if s.max < need {
				short = append(short, s.name)
			}
		}
		return Result{name, Warn, fmt.Sprintf("%s, below the %s goal: raise the maximum of %s to %s",
			detail, rate(opts.GoalBps), strings.Join(short, " and "), mib(need))}
	}
	return Result{name, OK, detail}
}

func sysctlMax(host Host, path string) (int64, error) {
	data, err := host.ReadFile(path)
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(data))
	if len(fields) != 3 {
		return 0, fmt.Errorf("%s: %q is not min default max", path, data)
	}
	return strconv.ParseInt(fields[2], 10, 64)
}

// clock compares this host's clock with the server's HTTP Date header, the request's round
// trip halved as the uncertainty on top of the header's one second.
func clock(ctx context.Context, host Host, server string) Result {
	const name = "clock"
	if server == "" {
		return Result{name, Skip, "no server configured (FATHOM_SERVER or --server)"}
	}
	endpoint, err := url.JoinPath(server, "/api/v1/auth/csrf/")
	if err != nil {
		return Result{name, Fail, fmt.Sprintf("server URL %q: %v", server, err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return Result{name, Fail, fmt.Sprintf("server URL %q: %v", server, err)}
	}
	sent := host.Now()
	resp, err := host.HTTP.Do(req)
	received := host.Now()
	if err != nil {
		return Result{name, Fail, fmt.Sprintf("cannot reach the server: %v", err)}
	}
	_ = resp.Body.Close()
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return Result{name, Skip, "the server sent no Date header"}
	}
	// The header truncates to the second: its middle is half a second later.
	midpoint := sent.Add(received.Sub(sent) / 2)
	offset := date.Add(500 * time.Millisecond).Sub(midpoint)
	uncertainty := 500*time.Millisecond + received.Sub(sent)/2
	detail := fmt.Sprintf("%+.1f s against the server, ±%.1f s", offset.Seconds(), uncertainty.Seconds())
	if offset.Abs() > clockFailAfter+uncertainty {
		return Result{name, Fail, detail + ": synchronise it (chrony or systemd-timesyncd); results would carry wrong times"}
	}
	return Result{name, OK, detail}
}

// clockSync is whether an NTP daemon keeps this host's clock synchronized, as the kernel
// says: one-way latency is only as exact as the two ends' clocks agree, and the results
// carry the error each declares.
func clockSync(host Host) Result {
	const name = "clock sync"
	state, err := host.ClockState()
	if err != nil {
		return Result{name, Skip, fmt.Sprintf("cannot read the kernel's clock state: %v", err)}
	}
	detail := fmt.Sprintf("maximum error %s", state.MaxError)
	if !state.Synchronized {
		return Result{name, Warn, "not synchronized (" + detail + "): one-way latency to and from this host is off by the clocks' " +
			"difference; run chrony or systemd-timesyncd"}
	}
	return Result{name, OK, "synchronized by NTP, " + detail}
}

// mtu names the interface the server is reached through and its MTU.
func mtu(ctx context.Context, host Host, server string) Result {
	const name = "mtu"
	if server == "" {
		return Result{name, Skip, "no server configured (FATHOM_SERVER or --server)"}
	}
	u, err := url.Parse(server)
	if err != nil || u.Hostname() == "" {
		return Result{name, Fail, fmt.Sprintf("server URL %q has no host", server)}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80"}[u.Scheme]
		if port == "" {
			port = "443"
		}
	}
	local, err := host.LocalAddr(ctx, net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return Result{name, Fail, fmt.Sprintf("no route to the server: %v", err)}
	}
	iface, size, err := host.MTUOf(local)
	if err != nil {
		return Result{name, Skip, fmt.Sprintf("source address %s: %v", local, err)}
	}
	detail := fmt.Sprintf("%s (%s) has MTU %d towards the server", iface, local, size)
	if size < 1280 {
		return Result{name, Warn, detail + ": below IPv6's minimum, so probes will fragment or fail"}
	}
	return Result{name, OK, detail}
}

func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if line == "" {
		return "no output"
	}
	return line
}

func mib(bytes int64) string {
	return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20))
}

func rate(bps float64) string {
	if bps >= 1e9 {
		return fmt.Sprintf("%.2f Gbit/s", bps/1e9)
	}
	return fmt.Sprintf("%.0f Mbit/s", bps/1e6)
}
