package model

import (
	"fmt"
	"math/bits"
)

// Layout packs the states of one closed model into a fixed number of 64-bit
// words, for a model checker's state store: each field takes the fewest bits
// its range needs, and fields the configuration does not use take none.
// Equal states pack to equal words and different states to different words,
// so the packed form identifies a state; it is not a hash.
//
// A Layout is immutable and safe for concurrent use.
type Layout struct {
	m                          *Model
	words                      int
	bits                       int
	tid, st, pend, wake, pl    uint
	age, tries                 uint
	tick, slice, steal, victim uint
	gcap, glen, lcap, llen     uint
	spawned                    uint

	// Where each field starts in a task's bits and in a worker's, and how
	// many bits each takes (see Pack): the state's field comes first, at 0.
	pendAt, wakeAt, plAt, ageAt, triesAt, taskW uint
	tickAt, sliceAt, stealAt, victimAt, workerW uint
}

// Layout returns the packing of m's states. It fails for an open model.
func (m *Model) Layout() (*Layout, error) {
	if m.open {
		return nil, fmt.Errorf("model: an open model's states cannot be packed")
	}
	c := &m.cfg
	l := &Layout{m: m}
	l.tid = width(c.Tasks)
	l.st = 3
	if !c.Endless {
		l.pend = width(c.Pendings)
	}
	l.wake = width(c.Wakes)
	l.pl = 1
	if c.Policy == Priority && c.Aging > 0 {
		l.age = width(c.Aging)
	}
	if c.Policy == Retry {
		l.tries = width(max(c.Retries, c.Failures))
	}
	if c.GlobalInterval > 0 {
		l.tick = width(c.GlobalInterval - 1)
	}
	if c.Slice > 0 {
		l.slice = width(c.Slice)
	}
	if c.Variant == StealOwnerEnd {
		l.steal = l.tid
		l.victim = width(c.Workers - 1)
	}
	gcap := c.Tasks
	switch c.Variant {
	case DuplicateEnqueue, EnqueueWhileRunning:
		// Copies of a task can pile up before an invariant stops the search.
		gcap = 2*c.Tasks + 2
	}
	l.gcap = uint(gcap)
	l.glen = width(gcap)
	l.lcap = uint(c.LocalCap)
	l.llen = width(c.LocalCap)
	l.spawned = width(c.Tasks)
	l.pendAt = l.st
	l.wakeAt = l.pendAt + l.pend
	l.plAt = l.wakeAt + l.wake
	l.ageAt = l.plAt + l.pl
	l.triesAt = l.ageAt + l.age
	l.taskW = l.triesAt + l.tries
	l.tickAt = l.tid
	l.sliceAt = l.tickAt + l.tick
	l.stealAt = l.sliceAt + l.slice
	l.victimAt = l.stealAt + l.steal
	l.workerW = l.victimAt + l.victim
	T, W := uint(c.Tasks), uint(c.Workers)
	n := T*l.taskW + W*l.workerW +
		l.glen + l.gcap*l.tid + W*(l.llen+l.lcap*l.tid) + l.spawned
	l.bits = int(n)
	l.words = (int(n) + 63) / 64
	return l, nil
}

func width(n int) uint {
	if n <= 0 {
		return 0
	}
	return uint(bits.Len(uint(n)))
}

// Words returns how many uint64 words a packed state takes.
func (l *Layout) Words() int { return l.words }

// Bits returns how many bits of those words are used.
func (l *Layout) Bits() int { return l.bits }

// TaskBits returns how many bits the tasks' fields take: they come first,
// bits 0 to TaskBits()-1, and the workers' and queues' fields follow (a
// compact store cuts states there).
func (l *Layout) TaskBits() int {
	return len(l.m.Init().Task) * int(l.taskW)
}

type bitWriter struct {
	dst []uint64
	w   int  // word index
	off uint // bits used in dst[w]
}

func (b *bitWriter) put(v uint64, n uint) {
	if n == 0 {
		return
	}
	if n < 64 {
		v &= 1<<n - 1
	}
	b.dst[b.w] |= v << b.off
	if b.off+n > 64 {
		b.dst[b.w+1] |= v >> (64 - b.off)
	}
	b.off += n
	if b.off >= 64 {
		b.off -= 64
		b.w++
	}
}

// putQueue writes a queue as its length and then cap slots of tid bits,
// the used ones first: in one write when it fits in a word.
func (b *bitWriter) putQueue(q []int32, lenBits, tid, cap uint) {
	if n := lenBits + cap*tid; n <= 64 {
		v := uint64(len(q))
		at := lenBits
		for _, t := range q {
			v |= uint64(t) << at
			at += tid
		}
		b.put(v, n)
		return
	}
	b.put(uint64(len(q)), lenBits)
	for _, t := range q {
		b.put(uint64(t), tid)
	}
	b.skip((cap - uint(len(q))) * tid)
}

func (b *bitWriter) skip(n uint) {
	b.off += n
	b.w += int(b.off / 64)
	b.off %= 64
}

type bitReader struct {
	src []uint64
	w   int
	off uint
}

func (b *bitReader) get(n uint) uint64 {
	if n == 0 {
		return 0
	}
	v := b.src[b.w] >> b.off
	if b.off+n > 64 {
		v |= b.src[b.w+1] << (64 - b.off)
	}
	b.off += n
	if b.off >= 64 {
		b.off -= 64
		b.w++
	}
	return v & (1<<n - 1)
}

// Pack writes s into dst, which has Words() words. It reports false if s
// does not fit the layout (a queue longer than any correct run makes).
func (l *Layout) Pack(s *State, dst []uint64) bool {
	clear(dst[:l.words])
	b := bitWriter{dst: dst}
	// Fields are combined per task and per worker, so that each takes one
	// write; the layout is the same as field by field.
	p1, p2, p3, p4, p5, tw := l.pendAt, l.wakeAt, l.plAt, l.ageAt, l.triesAt, l.taskW
	for i := range s.Task {
		v := uint64(s.Task[i]) | uint64(s.Pend[i])<<p1 | uint64(s.Wakes[i])<<p2 | uint64(s.Age[i])<<p4 | uint64(s.Tries[i])<<p5
		if s.Polled[i] {
			v |= 1 << p3
		}
		b.put(v, tw)
	}
	q1, q2, q3, q4, ww := l.tickAt, l.sliceAt, l.stealAt, l.victimAt, l.workerW
	for w := range s.Cur {
		b.put(uint64(s.Cur[w])|uint64(s.Tick[w])<<q1|uint64(s.Slice[w])<<q2|uint64(s.Steal[w])<<q3|uint64(s.Victim[w])<<q4, ww)
	}
	if uint(len(s.Global)) > l.gcap {
		return false
	}
	b.putQueue(s.Global, l.glen, l.tid, l.gcap)
	for _, q := range s.Local {
		if uint(len(q)) > l.lcap {
			return false
		}
		b.putQueue(q, l.llen, l.tid, l.lcap)
	}
	b.put(uint64(s.Spawned), l.spawned)
	return true
}

// Unpack reads a packed state into s, which must come from the same model's
// Init (or a copy of one).
func (l *Layout) Unpack(src []uint64, s *State) {
	b := bitReader{src: src}
	p1, p2, p3, p4, p5, tw := l.pendAt, l.wakeAt, l.plAt, l.ageAt, l.triesAt, l.taskW
	field := func(v uint64, at, n uint) uint64 { return v >> at & (1<<n - 1) }
	for i := range s.Task {
		v := b.get(tw)
		s.Task[i] = TaskState(field(v, 0, l.st))
		s.Pend[i] = uint8(field(v, p1, l.pend))
		s.Wakes[i] = uint8(field(v, p2, l.wake))
		s.Polled[i] = field(v, p3, 1) == 1
		s.Age[i] = uint8(field(v, p4, l.age))
		s.Tries[i] = uint8(field(v, p5, l.tries))
	}
	q1, q2, q3, q4, ww := l.tickAt, l.sliceAt, l.stealAt, l.victimAt, l.workerW
	for w := range s.Cur {
		v := b.get(ww)
		s.Cur[w] = int32(field(v, 0, l.tid))
		s.Tick[w] = uint8(field(v, q1, l.tick))
		s.Slice[w] = uint8(field(v, q2, l.slice))
		s.Steal[w] = int32(field(v, q3, l.steal))
		s.Victim[w] = int8(field(v, q4, l.victim))
	}
	n := int(b.get(l.glen))
	s.Global = s.Global[:0]
	for k := 0; k < n; k++ {
		s.Global = append(s.Global, int32(b.get(l.tid)))
	}
	b.off += (l.gcap - uint(n)) * l.tid
	b.w += int(b.off / 64)
	b.off %= 64
	for w := range s.Local {
		n := int(b.get(l.llen))
		s.Local[w] = s.Local[w][:0]
		for k := 0; k < n; k++ {
			s.Local[w] = append(s.Local[w], int32(b.get(l.tid)))
		}
		b.off += (l.lcap - uint(n)) * l.tid
		b.w += int(b.off / 64)
		b.off %= 64
	}
	s.Spawned = int(b.get(l.spawned))
}
