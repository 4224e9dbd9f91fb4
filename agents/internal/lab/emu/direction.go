// Package emu is the lab's link emulator: what one direction of a link does to each packet
// (policer, loss, rate limit with a drop-tail queue, delay with jitter, ECMP members), and
// the pumps that move packets between TUN devices on that schedule.
package emu

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Params configure one direction. Zero values switch a stage off.
type Params struct {
	Delay   time.Duration
	Jitter  time.Duration
	Reorder bool
	Loss    float64
	// Gilbert-Elliott bursty loss: probability per packet of entering and leaving the bad
	// state, and the loss probability in each state. PLeaveBad 0 switches it off.
	GEEnterBad, GELeaveBad, GELossBad, GELossGood float64
	RateBps                                       float64
	QueueBytes                                    int
	PolicerBps                                    float64
	PolicerBurst                                  int
	Members                                       []Member
}

// Member is one ECMP path.
type Member struct {
	Delay  time.Duration
	Weight int
}

// Verdict says what happens to a packet.
type Verdict int

const (
	Forward Verdict = iota
	DropPolicer
	DropLoss
	DropQueue
)

// Counters are totals since start, per direction.
type Counters struct {
	Packets, Bytes, Forwarded                 uint64
	DroppedPolicer, DroppedLoss, DroppedQueue uint64
	PerMember                                 []uint64
}

// Direction holds one direction's parameters and state. Admit is called by one reader
// goroutine; Set may come from the control socket at any time.
type Direction struct {
	mu       sync.Mutex
	p        Params
	rng      *rand.Rand
	tokens   float64
	tokensAt time.Time
	geBad    bool
	txEnd    time.Time   // when the rate limiter finishes sending what it holds
	lastOut  []time.Time // per member: the latest departure, to keep FIFO order
	counters Counters
}

// NewDirection starts with a full policer bucket.
func NewDirection(p Params, seed uint64) *Direction {
	d := &Direction{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	d.Set(p)
	return d
}

// Set replaces the parameters; queues and buckets start afresh, so a change takes effect
// with the next packet.
func (d *Direction) Set(p Params) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.p = p
	d.tokens = float64(p.PolicerBurst)
	d.tokensAt = time.Time{}
	members := max(1, len(p.Members))
	d.lastOut = make([]time.Time, members)
	if len(d.counters.PerMember) != members {
		d.counters.PerMember = make([]uint64, members)
	}
}

// Params returns the current parameters.
func (d *Direction) Params() Params {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.p
}

// Counters returns a copy of the counters.
func (d *Direction) Counters() Counters {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.counters
	c.PerMember = append([]uint64(nil), d.counters.PerMember...)
	return c
}

// Admit decides a packet's fate at now: dropped (and why), or forwarded through member at
// depart.
func (d *Direction) Admit(pkt []byte, now time.Time) (verdict Verdict, member int, depart time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	size := len(pkt)
	d.counters.Packets++
	d.counters.Bytes += uint64(size)

	if d.p.PolicerBps > 0 && !d.policerAdmits(size, now) {
		d.counters.DroppedPolicer++
		return DropPolicer, 0, now
	}
	if d.lost() {
		d.counters.DroppedLoss++
		return DropLoss, 0, now
	}
	sent := now
	if d.p.RateBps > 0 {
		start := now
		if d.txEnd.After(now) {
			start = d.txEnd
		}
		// Bytes still waiting in the queue, from the time the link needs to send them.
		backlog := d.txEnd.Sub(now).Seconds() * d.p.RateBps / 8
		if backlog > 0 && d.p.QueueBytes > 0 && backlog+float64(size) > float64(d.p.QueueBytes) {
			d.counters.DroppedQueue++
			return DropQueue, 0, now
		}
		d.txEnd = start.Add(time.Duration(float64(size) * 8 / d.p.RateBps * float64(time.Second)))
		sent = d.txEnd
	}

	delay := d.p.Delay
	if len(d.p.Members) > 0 {
		hash, _ := FlowHash(pkt)
		weights := make([]int, len(d.p.Members))
		for i, m := range d.p.Members {
			weights[i] = m.Weight
		}
		member = PickMember(hash, weights)
		delay = d.p.Members[member].Delay
	}
	if d.p.Jitter > 0 {
		offset := time.Duration((d.rng.Float64()*2 - 1) * float64(d.p.Jitter))
		delay = max(0, delay+offset)
	}
	depart = sent.Add(delay)
	if !d.p.Reorder && depart.Before(d.lastOut[member]) {
		depart = d.lastOut[member] // jitter must not overtake the packet in front
	}
	d.lastOut[member] = depart
	d.counters.Forwarded++
	d.counters.PerMember[member]++
	return Forward, member, depart
}

func (d *Direction) policerAdmits(size int, now time.Time) bool {
	if !d.tokensAt.IsZero() {
		d.tokens = math.Min(float64(d.p.PolicerBurst), d.tokens+now.Sub(d.tokensAt).Seconds()*d.p.PolicerBps/8)
	}
	d.tokensAt = now
	if d.tokens < float64(size) {
		return false
	}
	d.tokens -= float64(size)
	return true
}

func (d *Direction) lost() bool {
	if d.p.GELeaveBad > 0 {
		if d.geBad {
			if d.rng.Float64() < d.p.GELeaveBad {
				d.geBad = false
			}
		} else if d.rng.Float64() < d.p.GEEnterBad {
			d.geBad = true
		}
		lossHere := d.p.GELossGood
		if d.geBad {
			lossHere = d.p.GELossBad
		}
		if lossHere > 0 && d.rng.Float64() < lossHere {
			return true
		}
	}
	return d.p.Loss > 0 && d.rng.Float64() < d.p.Loss
}
