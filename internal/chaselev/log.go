package chaselev

import "sync/atomic"

// Clock is the logical clock of one run: every operation of every
// goroutine draws its call and return ticks from it. The zero value starts
// at 0; the first tick is 1. Safe for concurrent use.
type Clock struct{ n atomic.Uint64 }

// Tick returns the next tick.
func (c *Clock) Tick() uint64 { return c.n.Add(1) }

// OpKind is a deque operation.
type OpKind uint8

// Operations.
const (
	OpPush  OpKind = iota + 1 // owner: Push
	OpPop                     // owner: Pop
	OpSteal                   // thief: Steal
)

// Op is one recorded operation: [Call, Return] on the run's Clock. Value is
// the pushed value, or what a Pop or Steal returned (0 = nothing). Full is
// a Push that found the deque full; Abort a Steal that lost its CAS.
type Op struct {
	Client int
	Kind   OpKind
	Value  int64
	Full   bool
	Abort  bool
	Call   uint64
	Return uint64
}

// Log records the operations of one goroutine. It is not safe for
// concurrent use: give each goroutine its own, all on one Clock.
type Log struct {
	clock  *Clock
	client int
	ops    []Op
}

// NewLog returns a log for client (any number naming the goroutine).
func NewLog(c *Clock, client int) *Log { return &Log{clock: c, client: client} }

// Ops returns the recorded operations in the order they were called.
func (l *Log) Ops() []Op { return l.ops }

// Reset forgets the recorded operations, keeping the memory.
func (l *Log) Reset() { l.ops = l.ops[:0] }

// Push calls d.Push(x) and records it. Owner only.
func (l *Log) Push(d *Deque, x int64) bool {
	call := l.clock.Tick()
	ok := d.Push(x)
	ret := l.clock.Tick()
	l.ops = append(l.ops, Op{Client: l.client, Kind: OpPush, Value: x, Full: !ok, Call: call, Return: ret})
	return ok
}

// Pop calls d.Pop() and records it. Owner only.
func (l *Log) Pop(d *Deque) int64 {
	call := l.clock.Tick()
	x := d.Pop()
	ret := l.clock.Tick()
	l.ops = append(l.ops, Op{Client: l.client, Kind: OpPop, Value: x, Call: call, Return: ret})
	return x
}

// Steal calls d.Steal() and records it. Any thief.
func (l *Log) Steal(d *Deque) (int64, StealResult) {
	call := l.clock.Tick()
	x, r := d.Steal()
	ret := l.clock.Tick()
	l.ops = append(l.ops, Op{Client: l.client, Kind: OpSteal, Value: x, Abort: r == Abort, Call: call, Return: ret})
	return x, r
}
