package emu

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

const (
	tunSetIff = 0x400454ca // TUNSETIFF
	iffTun    = 0x0001
	iffNoPi   = 0x1000
)

// OpenTUN creates a TUN device (IPv4 packets, no packet-info header) in the calling
// process's network namespace and returns its file descriptor. The device lives as long as
// the descriptor; moving it to another namespace keeps it attached.
func OpenTUN(name string) (int, error) {
	if len(name) >= 16 {
		return -1, fmt.Errorf("TUN name %q is longer than 15 bytes", name)
	}
	fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	var ifr [40]byte
	copy(ifr[:16], name)
	*(*uint16)(unsafe.Pointer(&ifr[16])) = iffTun | iffNoPi
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), tunSetIff, uintptr(unsafe.Pointer(&ifr[0]))); errno != 0 {
		syscall.Close(fd)
		return -1, fmt.Errorf("TUNSETIFF %s: %w", name, errno)
	}
	return fd, nil
}

// TUN is an open TUN device.
type TUN struct {
	Name string
	FD   int
}

// Read reads one packet (blocking).
func (t TUN) Read(buf []byte) (int, error) {
	for {
		n, err := syscall.Read(t.FD, buf)
		if err == syscall.EINTR {
			continue
		}
		return n, err
	}
}

// Write sends one packet into the kernel on the device's side.
func (t TUN) Write(pkt []byte) error {
	for {
		_, err := syscall.Write(t.FD, pkt)
		if err == syscall.EINTR {
			continue
		}
		return err
	}
}

// Close closes the descriptor, which removes the device.
func (t TUN) Close() error { return os.NewFile(uintptr(t.FD), t.Name).Close() }
