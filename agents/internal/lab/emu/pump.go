package emu

import (
	"errors"
	"syscall"
	"time"
)

// Pump moves the packets that the kernel on one side sends into `from` through a
// Direction and a DelayLine, out of `to` into the other side's kernel.
type Pump struct {
	Dir  *Direction
	line *DelayLine
	from TUN
	to   TUN
}

// NewPump wires from -> dir -> to; Run starts reading.
func NewPump(dir *Direction, from, to TUN) *Pump {
	p := &Pump{Dir: dir, from: from, to: to}
	p.line = NewDelayLine(func(pkt []byte) {
		// A full TUN queue on the far side drops the packet, as a full NIC ring would.
		_ = p.to.Write(pkt)
	})
	return p
}

// Run reads until the device is closed.
func (p *Pump) Run() error {
	defer p.line.Close()
	buf := make([]byte, 65536)
	for {
		n, err := p.from.Read(buf)
		if err != nil {
			if errors.Is(err, syscall.EBADF) || errors.Is(err, syscall.EIO) {
				return nil
			}
			return err
		}
		now := time.Now()
		verdict, _, depart := p.Dir.Admit(buf[:n], now)
		if verdict != Forward {
			continue
		}
		pkt := make([]byte, n)
		copy(pkt, buf[:n])
		p.line.Push(pkt, depart)
	}
}
