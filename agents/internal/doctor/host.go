package doctor

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/fathom-net/fathom/agents/internal/hostclock"
)

// commandTimeout bounds each tool the checks run (ping waits 2 s for its echo).
const commandTimeout = 10 * time.Second

// RealHost is this machine.
func RealHost() Host {
	return Host{
		LookPath: exec.LookPath,
		Run: func(ctx context.Context, name string, args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, commandTimeout)
			defer cancel()
			out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
			return string(out), err
		},
		ReadFile:  os.ReadFile,
		HTTP:      &http.Client{Timeout: 10 * time.Second},
		Now:       time.Now,
		LocalAddr: localAddr,
		MTUOf:     mtuOf,
		Listen: func(address string) (io.Closer, error) {
			return net.Listen("tcp", address)
		},
		ClockState: hostclock.Read,
	}
}

// localAddr asks the kernel which source address it would use towards remote: connecting a
// UDP socket picks the route and sends nothing.
func localAddr(ctx context.Context, remote string) (net.IP, error) {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "udp", remote)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	addr, ok := conn.LocalAddr().(*net.UDPAddr)
	if !ok {
		return nil, errors.New("no UDP source address")
	}
	return addr.IP, nil
}

func mtuOf(ip net.IP) (string, int, error) {
	interfaces, err := net.Interfaces()
	if err != nil {
		return "", 0, err
	}
	for _, iface := range interfaces {
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, addr := range addrs {
			if prefix, ok := addr.(*net.IPNet); ok && prefix.IP.Equal(ip) {
				return iface.Name, iface.MTU, nil
			}
		}
	}
	return "", 0, errors.New("no interface holds it")
}
