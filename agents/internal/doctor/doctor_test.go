package doctor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
)

const iperf312 = `iperf 3.12 (cJSON 1.7.15)
Linux vm 6.1.0 #1 SMP PREEMPT_DYNAMIC x86_64
Optional features available: CPU affinity setting, IPv6 flow label, SCTP, TCP congestion algorithm setting, sendfile / zerocopy, socket pacing, authentication, bind to device, support IPv4 don't fragment
`

type closer struct{}

func (closer) Close() error { return nil }

// healthy is a host where every check passes; tests break one thing each.
func healthy(outputs map[string]string) Host {
	tools := map[string]string{
		"iperf3":     iperf312,
		"traceroute": "Modern traceroute for Linux, version 2.1.2\nCopyright (c) 2016  Dmitry Butskoy",
		"ping":       "1 packets transmitted, 1 received",
	}
	for name, out := range outputs {
		tools[name] = out
	}
	files := map[string]string{
		"/proc/sys/net/ipv4/tcp_rmem": "4096\t131072\t33554432\n",
		"/proc/sys/net/ipv4/tcp_wmem": "4096\t16384\t33554432\n",
	}
	return Host{
		LookPath: func(file string) (string, error) {
			if _, ok := tools[file]; !ok || tools[file] == "missing" {
				return "", errors.New("not found")
			}
			return "/usr/bin/" + file, nil
		},
		Run: func(_ context.Context, name string, _ ...string) (string, error) {
			if strings.HasPrefix(tools[name], "error:") {
				return strings.TrimPrefix(tools[name], "error:"), errors.New("exit status 2")
			}
			return tools[name], nil
		},
		ReadFile: func(path string) ([]byte, error) {
			if text, ok := files[path]; ok {
				return []byte(text), nil
			}
			return nil, os.ErrNotExist
		},
		HTTP:      http.DefaultClient,
		Now:       time.Now,
		LocalAddr: func(context.Context, string) (net.IP, error) { return net.ParseIP("192.0.2.10"), nil },
		MTUOf:     func(net.IP) (string, int, error) { return "eth0", 9000, nil },
		Listen:    func(string) (io.Closer, error) { return closer{}, nil },
		ClockState: func() (hostclock.State, error) {
			return hostclock.State{Synchronized: true, MaxError: 1250 * time.Microsecond}, nil
		},
	}
}

func server(t *testing.T, offset time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Date", time.Now().Add(offset).UTC().Format(http.TimeFormat))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func options(t *testing.T) Options {
	return Options{Server: server(t, 0), Iperf3Port: 5201, PathRTT: 100 * time.Millisecond, GoalBps: 1e9}
}

func byCheck(results []Result) map[string]Result {
	found := map[string]Result{}
	for _, r := range results {
		found[r.Check] = r
	}
	return found
}

func TestAHealthyHostPassesEveryCheck(t *testing.T) {
	results := Check(context.Background(), healthy(nil), options(t))
	for _, r := range results {
		if r.Verdict != OK {
			t.Errorf("%s: %s %s", r.Check, r.Verdict, r.Detail)
		}
	}
	if Failed(results) {
		t.Fatal("a healthy host failed")
	}
	var out bytes.Buffer
	Write(&out, results)
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 8 ||
		!strings.HasPrefix(lines[0], "ok    iperf3       3.12 with authentication") {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestEachBrokenThingIsNamedWithItsFix(t *testing.T) {
	cases := []struct {
		name    string
		host    Host
		opts    func(Options) Options
		check   string
		verdict Verdict
		says    string
	}{
		{"no iperf3", healthy(map[string]string{"iperf3": "missing"}), nil, "iperf3", Fail, "install iperf3"},
		{"old iperf3", healthy(map[string]string{"iperf3": "iperf 3.6 (cJSON 1.5.2)"}), nil, "iperf3", Fail, "3.6 is too old"},
		{"iperf3 without auth", healthy(map[string]string{"iperf3": "iperf 3.16\nOptional features available: SCTP"}), nil,
			"iperf3", Warn, "without authentication"},
		{"busybox traceroute", healthy(map[string]string{"traceroute": "BusyBox v1.36.1"}), nil, "traceroute", Fail,
			"not the Linux traceroute 2.x"},
		{"old traceroute", healthy(map[string]string{"traceroute": "Modern traceroute for Linux, version 1.4"}), nil,
			"traceroute", Fail, "1.4 is too old"},
		{"ping without permission", healthy(map[string]string{"ping": "error:ping: socket: Operation not permitted"}), nil,
			"ping", Fail, "CAP_NET_RAW"},
		{"small buffers", healthy(nil), func(o Options) Options { o.PathRTT = 300 * time.Millisecond; return o },
			"tcp buffers", Warn, "raise the maximum of net.ipv4.tcp_rmem and net.ipv4.tcp_wmem to 35.8 MiB"},
		{"clock 30 s ahead of the server", healthy(nil), func(o Options) Options { o.Server = server(t, -30*time.Second); return o },
			"clock", Fail, "synchronise it"},
		{"no server configured", healthy(nil), func(o Options) Options { o.Server = ""; return o }, "clock", Skip,
			"no server configured"},
		{"server unreachable", healthy(nil), func(o Options) Options { o.Server = "http://127.0.0.1:1"; return o }, "clock",
			Fail, "cannot reach the server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := options(t)
			if c.opts != nil {
				opts = c.opts(opts)
			}
			got := byCheck(Check(context.Background(), c.host, opts))[c.check]
			if got.Verdict != c.verdict || !strings.Contains(got.Detail, c.says) {
				t.Fatalf("%s: got %s %q, want %s containing %q", c.check, got.Verdict, got.Detail, c.verdict, c.says)
			}
			if (c.verdict == Fail) != Failed(Check(context.Background(), c.host, opts)) {
				t.Fatal("Failed() disagrees with the verdicts")
			}
		})
	}
}

func TestAPortInUseAndATinyMTUWarn(t *testing.T) {
	host := healthy(nil)
	host.Listen = func(string) (io.Closer, error) { return nil, errors.New("address already in use") }
	host.MTUOf = func(net.IP) (string, int, error) { return "tun0", 1000, nil }
	found := byCheck(Check(context.Background(), host, options(t)))
	if found["iperf3 port"].Verdict != Warn || found["mtu"].Verdict != Warn {
		t.Fatalf("got %+v and %+v", found["iperf3 port"], found["mtu"])
	}
	if !strings.Contains(found["mtu"].Detail, "tun0 (192.0.2.10) has MTU 1000") {
		t.Fatal(found["mtu"].Detail)
	}
}

func TestAnUnsynchronizedClockWarns(t *testing.T) {
	host := healthy(nil)
	if got := byCheck(Check(context.Background(), host, options(t)))["clock sync"]; got.Detail != "synchronized by NTP, maximum error 1.25ms" {
		t.Errorf("%+v", got)
	}
	host.ClockState = func() (hostclock.State, error) { return hostclock.State{MaxError: 16 * time.Second}, nil }
	got := byCheck(Check(context.Background(), host, options(t)))["clock sync"]
	if got.Verdict != Warn || !strings.Contains(got.Detail, "not synchronized (maximum error 16s)") || !strings.Contains(got.Detail, "chrony") {
		t.Errorf("%+v", got)
	}
	host.ClockState = func() (hostclock.State, error) {
		return hostclock.Unknown, errors.New("adjtimex: operation not permitted")
	}
	if got := byCheck(Check(context.Background(), host, options(t)))["clock sync"]; got.Verdict != Skip {
		t.Errorf("%+v", got)
	}
}

func TestTheRealHostReadsThisMachine(t *testing.T) {
	// Loopback only: the source address towards 127.0.0.1 and its interface.
	host := RealHost()
	ip, err := host.LocalAddr(context.Background(), "127.0.0.1:9")
	if err != nil || !ip.IsLoopback() {
		t.Fatalf("source address towards loopback: %v %v", ip, err)
	}
	name, size, err := host.MTUOf(ip)
	if err != nil || name == "" || size <= 0 {
		t.Fatalf("loopback interface: %q %d %v", name, size, err)
	}
}
