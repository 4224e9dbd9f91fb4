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
	// back is the other direction's pump: the ICMP errors this direction's routers send
	// go to `from` through its delay line, as replies would.
	back *Pump
}

// NewPumps wires a link's two directions: a -> ab -> b and b -> ba -> a. Run starts each.
func NewPumps(ab, ba *Direction, a, b TUN) (forward, reverse *Pump) {
	forward, reverse = newPump(ab, a, b), newPump(ba, b, a)
	forward.back, reverse.back = reverse, forward
	return forward, reverse
}

func newPump(dir *Direction, from, to TUN) *Pump {
	p := &Pump{Dir: dir, from: from, to: to}
	p.line = NewDelayLine(func(pkt []byte, late time.Duration) {
		// A full TUN queue on the far side drops the packet, as a full NIC ring would.
		_ = p.to.Write(pkt)
		p.Dir.RecordLateness(late)
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
		p.handle(buf[:n], time.Now())
	}
}

// handle passes one packet read at now (in the read buffer: copied before it is kept)
// through the direction. Through a router it loses one TTL; if its TTL ran out there, the
// router's answer reaches the sender after the member's delay (Fate.Depart) and the
// reverse direction's (BaseDelay), about the member's RTT, as hop RTTs look in traceroute.
func (p *Pump) handle(pkt []byte, now time.Time) {
	fate := p.Dir.Admit(pkt, now)
	switch fate.Verdict {
	case Forward:
		out := append([]byte(nil), pkt...)
		if fate.Router.IsValid() {
			decrementTTL(out)
		}
		p.line.Push(out, fate.Depart)
	case Expire:
		if reply := timeExceeded(pkt, fate.RouterFor(pkt)); reply != nil {
			p.back.line.Push(reply, fate.Depart.Add(p.back.Dir.BaseDelay(reply)))
		}
	}
}
