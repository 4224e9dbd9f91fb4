package emu

import (
	"container/heap"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// DelayLine holds packets until their departure time and hands each to out then. Go's
// timers fire up to a millisecond late here, which would be most of a lab path's error
// budget, so the line sleeps with nanosleep (about 60 µs late) and spins the last stretch.
type DelayLine struct {
	mu     sync.Mutex
	items  packetHeap
	seq    uint64
	wake   chan struct{}
	out    func(pkt []byte, late time.Duration)
	closed bool
}

type timedPacket struct {
	depart time.Time
	seq    uint64
	pkt    []byte
}

type packetHeap []timedPacket

func (h packetHeap) Len() int { return len(h) }
func (h packetHeap) Less(i, j int) bool {
	if h[i].depart.Equal(h[j].depart) {
		return h[i].seq < h[j].seq
	}
	return h[i].depart.Before(h[j].depart)
}
func (h packetHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *packetHeap) Push(x any)   { *h = append(*h, x.(timedPacket)) }
func (h *packetHeap) Pop() any {
	old := *h
	item := old[len(old)-1]
	*h = old[:len(old)-1]
	return item
}

// NewDelayLine starts the line's sender; Close stops it. out gets each packet when it
// leaves, with how late that is against its departure time: the emulator's own pacing
// error, which the lab reports beside every paced check.
func NewDelayLine(out func(pkt []byte, late time.Duration)) *DelayLine {
	l := &DelayLine{wake: make(chan struct{}, 1), out: out}
	go l.run()
	return l
}

// Push schedules pkt (which the line now owns) for depart.
func (l *DelayLine) Push(pkt []byte, depart time.Time) {
	l.mu.Lock()
	l.seq++
	heap.Push(&l.items, timedPacket{depart: depart, seq: l.seq, pkt: pkt})
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close stops the sender; packets still held are dropped.
func (l *DelayLine) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Len is the number of packets held.
func (l *DelayLine) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}

const (
	spinBelow = 120 * time.Microsecond
	// maxNap bounds one sleep so a packet pushed with an earlier departure (another ECMP
	// member, or reordering jitter) is noticed soon.
	maxNap = 500 * time.Microsecond
)

func (l *DelayLine) run() {
	runtime.LockOSThread() // nanosleep blocks this thread, not the scheduler
	defer runtime.UnlockOSThread()
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		if len(l.items) == 0 {
			l.mu.Unlock()
			<-l.wake
			continue
		}
		wait := time.Until(l.items[0].depart)
		if wait <= 0 {
			item := heap.Pop(&l.items).(timedPacket)
			l.mu.Unlock()
			l.out(item.pkt, -wait)
			continue
		}
		l.mu.Unlock()
		switch {
		case wait > spinBelow:
			nap := syscall.NsecToTimespec(int64(min(wait-spinBelow/2, maxNap)))
			_ = syscall.Nanosleep(&nap, nil)
		default:
			runtime.Gosched()
		}
	}
}
