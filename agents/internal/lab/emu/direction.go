// Package emu is the lab's link emulator: what one direction of a link does to each packet
// (policer, loss, rate limit with a drop-tail queue, delay with jitter, ECMP members that
// are router hops), and the pumps that move packets between TUN devices on that schedule.
package emu

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
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

// Member is one ECMP path. With a Router address it is also one router hop: what it
// forwards loses one TTL, and what runs out of TTL there is answered from Router, or from
// Router6 for IPv6 (see router.go, ipv6.go). The zero Router makes it a plain path.
type Member struct {
	Delay   time.Duration
	Weight  int
	Router  netip.Addr
	Router6 netip.Addr
}

// Verdict says what happens to a packet.
type Verdict int

const (
	Forward Verdict = iota
	DropPolicer
	DropLoss
	DropQueue
	// Expire: the TTL ran out at the member's router, which answers instead of forwarding.
	Expire
)

// Fate is what Admit decided for a packet.
type Fate struct {
	Verdict Verdict
	Member  int // the ECMP member, 0 without ECMP
	// Depart is when the packet leaves the direction; for Expire, when the router would
	// have forwarded it, which is when its answer starts back.
	Depart  time.Time
	Router  netip.Addr // the member's router; the zero Addr when there is none
	Router6 netip.Addr // its IPv6 address; the zero Addr when it has none
}

// RouterFor is the address the member's router answers pkt from: its IPv6 address for an
// IPv6 packet, else its IPv4 one.
func (f Fate) RouterFor(pkt []byte) netip.Addr {
	if isIPv6(pkt) {
		return f.Router6
	}
	return f.Router
}

// Counters are totals since start, per direction.
type Counters struct {
	Packets, Bytes, Forwarded                 uint64
	DroppedPolicer, DroppedLoss, DroppedQueue uint64
	Expired                                   uint64 // TTL ran out at a member's router
	PerMember                                 []uint64
	// Late counts departures by how late they left against their schedule: Late[i] those
	// no later than LateBoundsUs[i] µs (and later than the bound before), the last entry
	// those later than every bound. A late emulator turns a paced flow into bursts.
	Late []uint64
}

// LateBoundsUs are the upper bounds of Counters.Late's buckets, in microseconds.
var LateBoundsUs = [lateBounds]int64{100, 300, 1000, 3000, 10000}

const lateBounds = 5

// LateBucket is the index in Counters.Late of a departure that late.
func LateBucket(late time.Duration) int {
	us := late.Microseconds()
	for i, bound := range LateBoundsUs {
		if us <= bound {
			return i
		}
	}
	return len(LateBoundsUs)
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
	// Counted by the delay line's sender for every departure: atomics, so the sender never
	// waits for the reader's lock.
	late [lateBounds + 1]atomic.Uint64
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
	c.Late = make([]uint64, len(d.late))
	for i := range d.late {
		c.Late[i] = d.late[i].Load()
	}
	return c
}

// RecordLateness counts one departure that left late after its schedule.
func (d *Direction) RecordLateness(late time.Duration) {
	d.late[LateBucket(late)].Add(1)
}

// Admit decides a packet's fate at now: dropped (and why), forwarded through a member (at
// Depart), or expired at the member's router.
func (d *Direction) Admit(pkt []byte, now time.Time) Fate {
	d.mu.Lock()
	defer d.mu.Unlock()
	size := len(pkt)
	d.counters.Packets++
	d.counters.Bytes += uint64(size)

	if d.p.PolicerBps > 0 && !d.policerAdmits(size, now) {
		d.counters.DroppedPolicer++
		return Fate{Verdict: DropPolicer, Depart: now}
	}
	if d.lost() {
		d.counters.DroppedLoss++
		return Fate{Verdict: DropLoss, Depart: now}
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
			return Fate{Verdict: DropQueue, Depart: now}
		}
		d.txEnd = start.Add(time.Duration(float64(size) * 8 / d.p.RateBps * float64(time.Second)))
		sent = d.txEnd
	}

	fate := Fate{Verdict: Forward}
	delay := d.p.Delay
	if len(d.p.Members) > 0 {
		fate.Member = d.pickMember(pkt)
		m := d.p.Members[fate.Member]
		delay, fate.Router, fate.Router6 = m.Delay, m.Router, m.Router6
	}
	if d.p.Jitter > 0 {
		offset := time.Duration((d.rng.Float64()*2 - 1) * float64(d.p.Jitter))
		delay = max(0, delay+offset)
	}
	fate.Depart = sent.Add(delay)
	if !d.p.Reorder && fate.Depart.Before(d.lastOut[fate.Member]) {
		fate.Depart = d.lastOut[fate.Member] // jitter must not overtake the packet in front
	}
	d.counters.PerMember[fate.Member]++
	if fate.Router.IsValid() && ttlExhausted(pkt) {
		// It went as far as the router, so it counts for the member, but nothing follows it.
		fate.Verdict = Expire
		d.counters.Expired++
		return fate
	}
	d.lastOut[fate.Member] = fate.Depart
	d.counters.Forwarded++
	return fate
}

// pickMember is the ECMP member pkt's flow hashes to.
func (d *Direction) pickMember(pkt []byte) int {
	hash, _ := FlowHash(pkt)
	weights := make([]int, len(d.p.Members))
	for i, m := range d.p.Members {
		weights[i] = m.Weight
	}
	return PickMember(hash, weights)
}

// BaseDelay is how long this direction holds pkt with nothing queued and no jitter: its
// delay, or that of the ECMP member pkt hashes to. The routers' ICMP errors travel back
// with it alone: they are made by the emulator, not sent into the device by a host, so
// the policer, loss and queue (whose clocks run on packets read from the device) never
// see them.
func (d *Direction) BaseDelay(pkt []byte) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.p.Members) > 0 {
		return d.p.Members[d.pickMember(pkt)].Delay
	}
	return d.p.Delay
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
