package traces

// Packed is an executor's event in 24 bytes with no pointers: the form in
// which the built-in executors write their events while they run, and in
// which a BatchRecorder such as Log keeps them. It holds every field of an
// Event except Rule, Detail and Time (model steps, panic texts and clock
// readings, which are not packed), as long as the Kind is below 16; a
// Priority comes on a spawn, wake or requeue and a Future on a poll-begin,
// poll-end or register, either without a Victim and at most MaxPackedExtra
// (a Priority not below 0); Worker, Victim and Queue lie in
// [-1, MaxPackedWorker]; Return is 0, Seq or Seq+1 (a push takes effect at
// its own Seq, a take at the Seq after it, the beginning of its poll) and
// Call is 0, Seq-1 or Seq-2 (the clock's value just before the operation's
// own draw). Pack says whether an Event fits; Event turns a Packed back into
// the Event it came from.
//
// A Packed is a third of an Event, and a slice of Packed holds no pointer,
// so the garbage collector never scans it.
type Packed struct {
	Seq  uint64
	Task int64
	x    uint64 // see the layout below
}

// MaxPackedWorker is the largest worker index (and victim, and local queue's
// worker) a Packed can hold.
const MaxPackedWorker = 1<<14 - 3

// MaxPackedExtra is the largest Priority or Future a Packed can hold.
const MaxPackedExtra = 1<<14 - 1

// The layout of Packed.x, from the lowest bit: kind 4 bits, source 4,
// result 4, outcome 4, return 2 (0: none, 1: Seq, 2: Seq+1), call 2 (0:
// none, 1: Seq-1, 2: Seq-2), then worker, victim and queue in 14 bits each:
// worker and victim plus one (so that zero bits are -1, none), the queue as
// its Queue value (zero bits are QueueNone, w+1 is worker w's queue) but for
// the global queue, all ones; then one bit, extra, that says the victim's
// bits hold a format v1.1 field instead: the Priority of a spawn, wake or
// requeue (Prioritized), or the Future of a poll-begin, poll-end or register.
// Those events never have a victim, so the bits are free on them.
const (
	pkSource  = 4
	pkResult  = 8
	pkOutcome = 12
	pkReturn  = 16
	pkCall    = 18
	pkWorker  = 20
	pkVictim  = 34
	pkQueue   = 48
	pkExtra   = 62
	pkMask14  = 1<<14 - 1
)

// extraKind returns how the victim's bits of an event of kind k carry a
// v1.1 field: 'p' for a priority, 'f' for a future id, 0 for neither.
func extraKind(k Kind) byte {
	switch k {
	case KindSpawn, KindWake, KindRequeue:
		return 'p'
	case KindPollBegin, KindPollEnd, KindRegister:
		return 'f'
	}
	return 0
}

// PackedEvent returns the packed form of an event with the fields every
// event has: its kind, Seq, task (0 for none) and worker (-1 outside any
// worker). Victim is -1 and the other fields are zero; the With methods set
// them. Worker must lie in [-1, MaxPackedWorker]; an executor with more
// workers records Events instead. Built for an executor's hot path: it
// inlines to a few instructions.
func PackedEvent(k Kind, seq uint64, task int64, worker int32) Packed {
	return Packed{Seq: seq, Task: task, x: uint64(k) | uint64(uint32(worker+1)&pkMask14)<<pkWorker}
}

// WithQueueOp returns p as a queue operation on q, called at tick call and
// taking effect at p's Seq (so its Return tick is Seq). q must be a Queue
// whose worker lies in [-1, MaxPackedWorker], and call Seq-1 or Seq-2.
func (p Packed) WithQueueOp(q Queue, call uint64) Packed {
	p.x |= ((p.Seq-call)&3)<<pkCall | 1<<pkReturn | uint64(uint32(q)&pkMask14)<<pkQueue
	return p
}

// WithTake returns p as a take from source s (robbing victim for
// SourceSteal, else -1), called at tick Seq-1, whose Return tick is Seq+1
// (the beginning of the poll that follows it).
func (p Packed) WithTake(s Source, victim int32) Packed {
	p.x |= uint64(s&0xf)<<pkSource | 1<<pkCall | 2<<pkReturn | uint64(uint32(victim+1)&pkMask14)<<pkVictim
	return p
}

// WithResult returns p with Result r.
func (p Packed) WithResult(r Result) Packed {
	p.x |= uint64(r&0xf) << pkResult
	return p
}

// WithOutcome returns p with Outcome o.
func (p Packed) WithOutcome(o Outcome) Packed {
	p.x |= uint64(o&0xf) << pkOutcome
	return p
}

// WithPriority returns p, a spawn, wake or requeue, carrying the task's
// priority pr (format v1.1), which must lie in [0, MaxPackedExtra].
func (p Packed) WithPriority(pr int32) Packed {
	p.x |= 1<<pkExtra | uint64(uint32(pr)&pkMask14)<<pkVictim
	return p
}

// WithFuture returns p, a poll-begin, poll-end or register, carrying the
// id f of the future the poll drives (format v1.1), which must lie in
// [1, MaxPackedExtra].
func (p Packed) WithFuture(f int64) Packed {
	p.x |= 1<<pkExtra | uint64(f&pkMask14)<<pkVictim
	return p
}

// Pack returns the packed form of e, and false (with a zero Packed) if e
// does not fit: a Rule, Detail, Time or stop Reason, a Priority or Future out of range
// or on an event of another kind, a field out of its range, or a Return
// tick other than 0, Seq and Seq+1.
func Pack(e Event) (Packed, bool) {
	in := func(v int32) bool { return v >= -1 && v <= MaxPackedWorker }
	var extra uint64
	switch {
	case e.Prioritized:
		if e.Future != 0 || e.Victim != -1 || e.Priority < 0 || e.Priority > MaxPackedExtra || extraKind(e.Kind) != 'p' {
			return Packed{}, false
		}
		extra = 1<<pkExtra | uint64(e.Priority)<<pkVictim
	case e.Priority != 0:
		return Packed{}, false
	case e.Future != 0:
		if e.Victim != -1 || e.Future < 1 || e.Future > MaxPackedExtra || extraKind(e.Kind) != 'f' {
			return Packed{}, false
		}
		extra = 1<<pkExtra | uint64(e.Future)<<pkVictim
	}
	if e.Rule != 0 || e.Detail != "" || e.Time != 0 || e.Reason != StopShutdown || e.Kind > 0xf || !in(e.Worker) || !in(e.Victim) ||
		e.Queue < QueueGlobal || e.Queue > MaxPackedWorker+1 ||
		e.Source > 0xf || e.Result > 0xf || e.Outcome > 0xf {
		return Packed{}, false
	}
	var ret, call uint64
	switch {
	case e.Return == 0:
	case e.Return == e.Seq:
		ret = 1
	case e.Seq != ^uint64(0) && e.Return == e.Seq+1:
		ret = 2
	default:
		return Packed{}, false
	}
	switch {
	case e.Call == 0:
	case e.Seq >= 1 && e.Call == e.Seq-1:
		call = 1
	case e.Seq >= 2 && e.Call == e.Seq-2:
		call = 2
	default:
		return Packed{}, false
	}
	p := Packed{Seq: e.Seq, Task: e.Task}
	p.x = uint64(e.Kind) | uint64(e.Source)<<pkSource | uint64(e.Result)<<pkResult |
		uint64(e.Outcome)<<pkOutcome | ret<<pkReturn | call<<pkCall |
		uint64(e.Worker+1)<<pkWorker | uint64(uint32(e.Queue)&pkMask14)<<pkQueue
	if extra != 0 {
		p.x |= extra
	} else {
		p.x |= uint64(e.Victim+1) << pkVictim
	}
	return p, true
}

// Event returns the Event that p packs.
func (p Packed) Event() Event {
	e := Event{
		Seq: p.Seq, Task: p.Task,
		Kind:    Kind(p.x & 0xf),
		Source:  Source(p.x >> pkSource & 0xf),
		Result:  Result(p.x >> pkResult & 0xf),
		Outcome: Outcome(p.x >> pkOutcome & 0xf),
		Worker:  int32(p.x>>pkWorker&pkMask14) - 1,
		Victim:  int32(p.x>>pkVictim&pkMask14) - 1,
		Queue:   Queue(p.x >> pkQueue & pkMask14),
	}
	if e.Queue == pkMask14 {
		e.Queue = QueueGlobal
	}
	if p.x>>pkExtra&1 != 0 {
		v := p.x >> pkVictim & pkMask14
		e.Victim = -1
		if extraKind(e.Kind) == 'p' {
			e.Priority, e.Prioritized = int32(v), true
		} else {
			e.Future = int64(v)
		}
	}
	switch p.x >> pkReturn & 3 {
	case 1:
		e.Return = p.Seq
	case 2:
		e.Return = p.Seq + 1
	}
	if d := p.x >> pkCall & 3; d != 0 {
		e.Call = p.Seq - d
	}
	return e
}

// Worker returns p's worker, as Event().Worker would, without unpacking
// the rest.
func (p Packed) Worker() int32 { return int32(p.x>>pkWorker&pkMask14) - 1 }
