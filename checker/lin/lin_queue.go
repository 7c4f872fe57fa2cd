package lin

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/checker"
)

// QueueOpKind is what one operation on a queue did.
type QueueOpKind uint8

// Queue operations. A queue is a sequence with a head and a tail: pushes go
// to the tail; the global queue takes from the head (FIFO); a local deque's
// owner takes from the tail (LIFO) or the head (FIFO), and thieves take from
// the head.
const (
	Push     QueueOpKind = iota + 1 // append Value at the tail
	TakeTail                        // remove the tail element: Value, or 0 if the queue was empty
	TakeHead                        // remove the head element: Value, or 0 if the queue was empty
	Abort                           // a take that gave up (a lost CAS): no effect, linearizes anywhere
	PushSlot                        // put Value in the LIFO slot if it is empty, else at the tail
	TakeSlot                        // take the LIFO slot's element: Value
	TakeAny                         // remove Value wherever it is (a priority queue seen without priorities)
)

var linQueueOpNames = [...]string{"?", "push", "take-tail", "take-head", "abort", "push-slot", "take-slot", "take-any"}

func (k QueueOpKind) String() string {
	if int(k) < len(linQueueOpNames) {
		return linQueueOpNames[k]
	}
	return fmt.Sprintf("QueueOpKind(%d)", uint8(k))
}

// QueueOp is one operation on one queue, as an interval [Call, Return] on
// one logical clock. Return == 0 means the operation never returned (the run
// was cut): it may take effect at any point after its call, and it is kept.
// Call may be 0 (the clock before its first tick) when Return is not.
// Values are task ids (or deque elements), from 1; 0 in a take means "found
// empty".
type QueueOp struct {
	Client int // who called it (worker+1; 0 = outside any worker)
	Kind   QueueOpKind
	Value  int64
	Call   uint64
	Return uint64
	Seq    uint64 // the event's sequence number, for descriptions; optional
	// Moved, for a TakeHead that took more than its element (a steal of
	// half the deque): the elements that followed the head and went with
	// it, in any order.
	Moved []int64
}

// linInf is the return tick given to an operation that never returned.
const linInf = math.MaxInt64

// linQueueIn is the porcupine input of a queue operation. load is the
// synthetic first operation of a window that starts in a known, non-empty
// state; end is the synthetic last operation of a complete run (the queue
// must be empty).
type linQueueIn struct {
	kind  QueueOpKind
	value int64 // pushed value, or the value a take returned (0 = empty)
	load  []int64
	end   bool
	seq   uint64
	moved []int64 // TakeHead: the elements after the head that go with it
}

// linQueueState is an immutable sequence, head first, and the LIFO slot
// (0 = empty) of a local queue that has one. Steps copy.
type linQueueState struct {
	q    []int64
	slot int64
}

func (q linQueueState) empty() bool { return len(q.q) == 0 && q.slot == 0 }

func (q linQueueState) equal(o linQueueState) bool {
	return q.slot == o.slot && slices.Equal(q.q, o.q)
}

func linQueueStep(st any, in any, _ any) (bool, any) {
	q := st.(linQueueState)
	op := in.(linQueueIn)
	switch {
	case op.load != nil:
		if !q.empty() {
			return false, q
		}
		return true, linQueueState{q: op.load}
	case op.end:
		return q.empty(), q
	}
	switch op.kind {
	case PushSlot:
		if q.slot == 0 {
			return true, linQueueState{q: q.q, slot: op.value}
		}
		fallthrough
	case Push:
		n := make([]int64, len(q.q)+1)
		copy(n, q.q)
		n[len(q.q)] = op.value
		return true, linQueueState{q: n, slot: q.slot}
	case TakeSlot:
		if op.value == 0 {
			return q.slot == 0, q
		}
		if q.slot != op.value {
			return false, q
		}
		return true, linQueueState{q: q.q}
	case TakeTail:
		if op.value == 0 {
			return len(q.q) == 0, q
		}
		if len(q.q) == 0 || q.q[len(q.q)-1] != op.value {
			return false, q
		}
		return true, linQueueState{q: q.q[: len(q.q)-1 : len(q.q)-1], slot: q.slot}
	case TakeHead:
		if op.value == 0 {
			return len(q.q) == 0, q
		}
		if len(q.q) == 0 || q.q[0] != op.value {
			return false, q
		}
		if n := len(op.moved); n > 0 {
			// The next n elements are the moved ones, in some order.
			if len(q.q) < 1+n {
				return false, q
			}
			next := slices.Clone(q.q[1 : 1+n])
			want := slices.Clone(op.moved)
			slices.Sort(next)
			slices.Sort(want)
			if !slices.Equal(next, want) {
				return false, q
			}
			return true, linQueueState{q: q.q[1+n:], slot: q.slot}
		}
		return true, linQueueState{q: q.q[1:], slot: q.slot}
	case TakeAny:
		if op.value == 0 {
			return len(q.q) == 0, q
		}
		k := slices.Index(q.q, op.value)
		if k < 0 {
			return false, q
		}
		n := make([]int64, 0, len(q.q)-1)
		n = append(append(n, q.q[:k]...), q.q[k+1:]...)
		return true, linQueueState{q: n, slot: q.slot}
	case Abort:
		return true, q
	}
	return false, q
}

func linQueueModel(name string) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return linQueueState{} },
		Step: linQueueStep,
		Equal: func(a, b any) bool {
			return a.(linQueueState).equal(b.(linQueueState))
		},
		Hash: func(s any) uint64 {
			h := fnv.New64a()
			var b [8]byte
			q := s.(linQueueState)
			for _, v := range append(q.q, q.slot) {
				for i := range b {
					b[i] = byte(uint64(v) >> (8 * i))
				}
				h.Write(b[:])
			}
			return h.Sum64()
		},
		DescribeOperation: func(in, out any) string {
			op := in.(linQueueIn)
			switch {
			case op.load != nil:
				return fmt.Sprintf("%s starts as %v", name, op.load)
			case op.end:
				return fmt.Sprintf("%s empty at the end", name)
			}
			s := op.kind.String()
			switch {
			case op.kind == Push || op.kind == PushSlot:
				s = fmt.Sprintf("%s(%d)", op.kind, op.value)
			case op.kind == Abort:
			case op.value == 0:
				s += " → empty"
			default:
				s += fmt.Sprintf(" → %d", op.value)
			}
			if len(op.moved) > 0 {
				s += fmt.Sprintf(" with %v", op.moved)
			}
			if op.seq != 0 {
				s += fmt.Sprintf(" [event %d]", op.seq)
			}
			return s
		},
		DescribeState: func(s any) string {
			q := s.(linQueueState)
			if q.slot != 0 {
				return fmt.Sprintf("%s head→tail %v, slot %d", name, q.q, q.slot)
			}
			return fmt.Sprintf("%s head→tail %v", name, q.q)
		},
	}
}

// linTicks turns a recorded interval into porcupine's: never wall time, and
// an operation that never returned (Return 0) gets +inf. Call may be 0 (the
// clock's value before its first tick) when Return is not.
func linTicks(call, ret uint64) (int64, int64, error) {
	if call == 0 && ret == 0 {
		return 0, 0, fmt.Errorf("operation without call and return ticks")
	}
	if call >= linInf || (ret >= linInf) {
		return 0, 0, fmt.Errorf("tick %d out of range", max(call, ret))
	}
	if ret == 0 {
		return int64(call), linInf, nil
	}
	if ret < call {
		return 0, 0, fmt.Errorf("returns at tick %d before its call at tick %d", ret, call)
	}
	return int64(call), int64(ret), nil
}

// linWindow is a stretch of one queue's history that can be checked on its
// own: before its first call every earlier operation had returned, and the
// queue's content at that point is the same in every linearization.
type linWindow struct {
	ops []porcupine.Operation
}

// linQueueWindows cuts a queue history at determined quiescent points.
//
// A point between two calls is quiescent when every operation called before
// it has returned: any linearization orders all of those first. The content
// of the queue there is the multiset of values pushed and not yet taken; it
// is determined (the same in every linearization) when the pushes still in
// the queue were pairwise ordered in real time, because a queue keeps its
// elements in push order. Always true when the queue is empty, and always
// true for a deque whose only pusher is its owner. Each window then starts
// from that content (a synthetic load operation) and is checked on its own,
// so the exponential search of a strict-FIFO history is confined to one
// window. A cut that is quiescent but not determined is skipped, which only
// makes a window longer, never the answer wrong.
func linQueueWindows(ops []QueueOp, complete bool) ([]linWindow, error) {
	type iv struct {
		op        QueueOp
		call, ret int64
		index     int
	}
	ivs := make([]iv, len(ops))
	slotted := false // a LIFO slot: where an element sits depends on order; cut only when empty
	for i, op := range ops {
		c, r, err := linTicks(op.Call, op.Return)
		if err != nil {
			return nil, fmt.Errorf("queue operation %d (%s, event %d): %w", i, op.Kind, op.Seq, err)
		}
		switch op.Kind {
		case Push, TakeHead, TakeTail, Abort, TakeAny:
		case PushSlot, TakeSlot:
			slotted = true
		default:
			return nil, fmt.Errorf("queue operation %d (event %d): unknown kind %d", i, op.Seq, op.Kind)
		}
		if (op.Kind == Push || op.Kind == PushSlot) && op.Value <= 0 {
			return nil, fmt.Errorf("queue operation %d (event %d): push of %d (values start from 1)", i, op.Seq, op.Value)
		}
		ivs[i] = iv{op, c, r, i}
	}
	sort.SliceStable(ivs, func(a, b int) bool { return ivs[a].call < ivs[b].call })

	// Pushes and takes per value. A take matches the earliest push of its
	// value, whichever was called first (they may overlap).
	type pending struct{ call, ret int64 }
	type tally struct {
		pushes []pending
		taken  int
	}
	inQueue := map[int64]*tally{}
	size := 0 // pushes not matched by a take

	var windows []linWindow
	var cur []porcupine.Operation
	var load []int64
	maxRet := int64(math.MinInt64)
	last := int64(0)
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := cur
		if len(load) > 0 {
			// The load linearizes before everything in the window.
			first := w[0].Call
			w = append([]porcupine.Operation{{
				ClientId: 0, Input: linQueueIn{load: load}, Call: first - 1, Return: first - 1,
			}}, w...)
		}
		windows = append(windows, linWindow{ops: w})
		cur = nil
	}
	for i, x := range ivs {
		if i > 0 && maxRet < x.call {
			// Quiescent. Determined if the remaining pushes are ordered.
			if size == 0 {
				flush()
				load = nil
			} else if size <= 4096 && !slotted {
				var rem []pending
				var vals []int64
				for v, t := range inQueue {
					for k := t.taken; k < len(t.pushes); k++ {
						rem = append(rem, t.pushes[k])
						vals = append(vals, v)
					}
				}
				idx := make([]int, len(rem))
				for k := range idx {
					idx[k] = k
				}
				sort.Slice(idx, func(a, b int) bool { return rem[idx[a]].call < rem[idx[b]].call })
				ordered := true
				for k := 1; k < len(idx); k++ {
					if rem[idx[k-1]].ret >= rem[idx[k]].call {
						ordered = false
						break
					}
				}
				if ordered {
					flush()
					load = make([]int64, len(idx))
					for k, j := range idx {
						load[k] = vals[j]
					}
				}
			}
		}
		in := linQueueIn{kind: x.op.Kind, value: x.op.Value, seq: x.op.Seq, moved: x.op.Moved}
		cur = append(cur, porcupine.Operation{
			ClientId: x.op.Client, Input: in, Output: nil, Call: x.call, Return: x.ret, Metadata: x.index,
		})
		for _, v := range x.op.Moved {
			t := inQueue[v]
			if t == nil {
				t = &tally{}
				inQueue[v] = t
			}
			if len(t.pushes) > t.taken {
				size--
			}
			t.taken++
			if len(t.pushes) == t.taken {
				delete(inQueue, v)
			}
		}
		if x.op.Kind == Push || x.op.Kind == PushSlot || x.op.Kind != Abort && x.op.Value != 0 {
			t := inQueue[x.op.Value]
			if t == nil {
				t = &tally{}
				inQueue[x.op.Value] = t
			}
			before := max(len(t.pushes)-t.taken, 0)
			if x.op.Kind == Push || x.op.Kind == PushSlot {
				t.pushes = append(t.pushes, pending{x.call, x.ret})
			} else {
				t.taken++
			}
			after := max(len(t.pushes)-t.taken, 0)
			size += after - before
			if len(t.pushes) == t.taken {
				delete(inQueue, x.op.Value)
			}
		}
		maxRet = max(maxRet, x.ret)
		last = max(last, x.call)
	}
	if complete {
		// The run finished: the queue must end empty. The end operation
		// comes after every call; it stays inside the last window.
		end := last + 1
		if maxRet < linInf && maxRet >= end {
			end = maxRet + 1
		}
		if len(cur) == 0 && len(load) == 0 {
			// Nothing happened since an empty cut: nothing to check.
		} else {
			cur = append(cur, porcupine.Operation{
				ClientId: 0, Input: linQueueIn{end: true}, Call: end, Return: linInf, Metadata: -1,
			})
		}
	}
	flush()
	return windows, nil
}

// CheckQueue checks a history of one queue against the queue
// specification: pushes at the tail, TakeHead from the head, TakeTail
// from the tail, each take returning the element there (or 0 when the queue
// is empty); PushSlot, TakeSlot and TakeAny as their docs say.
// name labels the check ("global", "local[2]", "deque").
//
// The history is cut into windows at determined quiescent points: points
// where every operation called before has returned, and where the content
// of the queue is the same in every linearization (it is empty, or the
// elements still in it were pushed one after another in real time). Each
// window starts from that content and is checked on its own. A window of a
// strict FIFO queue whose operations all returned and all found an element
// is decided in O(n log n) (no take of a value not yet pushed, no two
// pushes ordered in real time taken in the other order); the others are
// searched by porcupine: together when at most opt.MaxWindow operations
// long, each on its own within opt.LongBudget when longer, Unknown if the
// search does not end. When opt.Complete is set the queue must end empty.
// When the history is not linearizable and opt.HTML is set, porcupine's
// visualization of the failing windows is written there.
//
// Cost: linear in the history outside the searches; a search is exponential
// in the overlapping operations of its window, bounded by opt.Budget. Safe
// for concurrent use: it shares nothing.
func CheckQueue(name string, ops []QueueOp, opt Options) (SpecCheck, error) {
	deadline := time.Now().Add(opt.budget())
	ws, err := linQueueWindows(ops, opt.Complete)
	if err != nil {
		return SpecCheck{Spec: name}, fmt.Errorf("%s: %w", name, err)
	}
	parts := make([][]porcupine.Operation, len(ws))
	for i, w := range ws {
		parts[i] = w.ops
	}
	c := linRun(name, linQueueModel(name), parts, opt.maxWindow(), opt.longBudget(), deadline, func(i int) string {
		return describeWindow(name, parts[i])
	}, linFIFODecide)
	if c.Verdict == checker.Violated && opt.HTML != "" {
		if err := writeLinHTML(c, opt.HTML, nil, max(time.Until(deadline), time.Second), opt.Inputs); err != nil {
			c.HTMLError = err.Error()
		} else {
			c.HTML = opt.HTML
		}
	}
	return c, nil
}

func describeWindow(name string, ops []porcupine.Operation) string {
	lo, hi := uint64(1<<63), uint64(0)
	n := 0
	for _, op := range ops {
		in, ok := op.Input.(linQueueIn)
		if !ok || in.load != nil || in.end {
			continue
		}
		n++
		if in.seq != 0 {
			lo, hi = min(lo, in.seq), max(hi, in.seq)
		}
	}
	if hi == 0 {
		return fmt.Sprintf("%s (a window of %d operations)", name, n)
	}
	return fmt.Sprintf("%s from event %d to event %d (%d operations)", name, lo, hi, n)
}
