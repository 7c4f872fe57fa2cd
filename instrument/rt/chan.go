package rt

import (
	"reflect"
	"slices"
	"unsafe"

	"github.com/execspec/execspec/instrument/rt/internal/rtlayout"
)

// hchan is the runtime's channel descriptor, read (never written) while
// every goroutine that could change it is blocked (settled), to tell
// without side effects whether an operation could complete (rtlayout).
type hchan = rtlayout.Chan

// entry is an operation of a blocked controlled goroutine, pending on a
// channel's shadow: two controlled goroutines that meet on a channel are
// neither of them blocked in the runtime, so the value is handed over here.
type entry struct {
	sel    *selState // shared by the cases of one select (a plain send or receive is a select of one case)
	idx    int       // the case of sel
	val    any       // receive: the value handed over
	ok     bool
	pusher pusher // send: the case (its value, v: not boxed at every send), which puts v into the channel's buffer without blocking
}

// pusher is a send case that can put its value into the channel's buffer
// without blocking, and reports whether it did.
type pusher interface{ push() bool }

// selState is one blocked select: a counterpart that completes one of its
// cases marks it done, so no other case completes too.
type selState struct {
	done bool
	idx  int
	g    *gor // the goroutine blocked in it (ready.go)
}

// shadow holds the pending operations of controlled goroutines on one
// channel, in arrival order (the runtime's queues are FIFO too), and the
// values received from it for real that no controlled goroutine took yet
// (stash: older than the channel's buffer, so taken first).
type shadow struct {
	senders, receivers []*entry
	stash              []stashed
}

type stashed struct {
	val any
	ok  bool
}

func (r *run) shadowOf(h *hchan) *shadow {
	sh := r.shadows[unsafe.Pointer(h)]
	if sh == nil {
		sh = &shadow{}
		r.shadows[unsafe.Pointer(h)] = sh
	}
	return sh
}

// firstLive returns the first pending entry of list that belongs to
// another select than sel and is not done.
func firstLive(list []*entry, sel *selState) *entry {
	for _, e := range list {
		if e.sel != sel && !e.sel.done {
			return e
		}
	}
	return nil
}

func (r *run) complete(e *entry) {
	e.sel.done = true
	e.sel.idx = e.idx
	if g := e.sel.g; g != nil {
		r.selDone = r.selDone.sized(g.id + 1)
		r.selDone.set(g.id)
	}
}

func removeEntry(list []*entry, e *entry) []*entry {
	if i := slices.Index(list, e); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// chanCase is what the readiness of a case needs, without its element
// type: the scheduler looks at every blocked goroutine's cases at every
// choice, so that is done in one loop over these (selWait.ready) rather
// than through a closure and a generic method per case.
type chanCase struct {
	h    *hchan
	sh   *shadow // h's, once the case is enqueued
	when *int64  // a receive from a timer's channel: its timer's when, if readable (the timer is the channel's for life)
	recv bool
}

// caseReady reports whether a case on h (a receive if recv, else a send)
// of the select sel could complete now: for real (realReady), or by a
// counterpart of another select pending on the shadow sh (looked up if
// nil).
func (r *run) caseReady(h *hchan, recv bool, sh *shadow, sel *selState) bool {
	if h == nil {
		return false
	}
	if r.realReady(h, recv) {
		return true
	}
	if sh == nil {
		if sh = r.shadows[unsafe.Pointer(h)]; sh == nil {
			return false
		}
	}
	if recv {
		return len(sh.stash) > 0 || firstLive(sh.senders, sel) != nil
	}
	return firstLive(sh.receivers, sel) != nil
}

// selWait is a blocked select (a plain send or receive is a select of
// one case): its state, its cases, what readiness needs of them, and
// what the real select of the external phase chose. One allocation
// holds it all (a plain send or receive: with its case, sendOp), and
// the goroutine uses it again (reuse).
type selWait struct {
	sel    selState
	all    []Case
	cases  []chanCase
	extIdx int
	buf    [2]chanCase
}

func newSelWait(sw *selWait, cases []Case) *selWait {
	sw.sel.idx, sw.all, sw.extIdx = -1, cases, -1
	sw.cases = sw.buf[:0]
	if len(cases) > len(sw.buf) {
		sw.cases = make([]chanCase, 0, len(cases))
	}
	return sw
}

// ready reports whether the select can go on: done by a counterpart, or
// a case that can complete.
func (w *selWait) ready(r *run) bool {
	if w.sel.done {
		return true
	}
	for i := range w.cases {
		if w.cases[i].canComplete(r, &w.sel) {
			return true
		}
	}
	return false
}

// canComplete reports whether c, a case of the select sel, could
// complete now (caseReady, with what the case knows: its shadow, its
// timer's when): never on a nil channel.
func (c *chanCase) canComplete(r *run, sel *selState) bool {
	h, sh := c.h, c.sh
	if h == nil {
		return false
	}
	if c.recv {
		return h.RecvNow() || c.when != nil && *c.when > 0 && *c.when <= r.now() ||
			len(sh.stash) > 0 || len(sh.senders) > 0 && firstLive(sh.senders, sel) != nil
	}
	return h.SendNow() || len(sh.receivers) > 0 && firstLive(sh.receivers, sel) != nil
}

// ext performs the select for real, with cancel as one more case, and
// reports whether a case completed (extIdx).
func (w *selWait) ext(cancel <-chan struct{}) bool {
	w.extIdx = realSelect(false, w.all, cancel)
	return w.extIdx >= 0
}

// tryNow performs the select for real if it can complete now, as a
// select with a default case (realSelect), and returns the index of the
// case that completed or -1. Where the runtime's timers can be read,
// realReady tells the cases that may complete: a select with only one
// is that case's try, without reflect.
func (w *selWait) tryNow(r *run) int {
	if !timersReadable {
		return realSelect(true, w.all, nil)
	}
	k := -1
	for i := range w.cases {
		if c := &w.cases[i]; c.h != nil && r.realReady(c.h, c.recv) {
			if k >= 0 {
				return realSelect(true, w.all, nil)
			}
			k = i
		}
	}
	if k < 0 || !w.all[k].try() {
		return -1
	}
	return k
}

func (w *selWait) timed() bool {
	for i := range w.cases {
		if w.cases[i].recv && rtlayout.TimerArmed(w.cases[i].h) {
			return true
		}
	}
	return false
}

// Case is one case of a select, made by RecvCase or SendCase. After
// Select returned its index, a receive case holds the value in V and OK.
type Case interface {
	hc() *hchan
	chanCase() chanCase
	ready(r *run, sel *selState) bool
	do(r *run, sel *selState) bool
	enqueue(r *run, sel *selState, idx int)
	dequeue(r *run)
	matched()
	reflectCase() reflect.SelectCase
	fromReflect(v reflect.Value, ok bool)
	try() bool // the operation for real if it can complete now (a select of this case and default)
}

// RecvC is a receive case: after Select chose it, V and OK hold what
// `v, ok := <-ch` would.
type RecvC[T any] struct {
	V   T
	OK  bool
	ch  <-chan T
	h   *hchan
	e   entry
	enq bool    // e was enqueued
	sh  *shadow // h's, once enqueued (or before: reuse): ready need not look it up
}

// RecvCase returns the case `<-ch` of a select.
func RecvCase[T any](ch <-chan T) *RecvC[T] {
	return &RecvC[T]{ch: ch, h: rtlayout.ChanOf(unsafe.Pointer(&ch))}
}

func (c *RecvC[T]) hc() *hchan { return c.h }

func (c *RecvC[T]) ready(r *run, sel *selState) bool { return r.caseReady(c.h, true, c.sh, sel) }

func (c *RecvC[T]) chanCase() chanCase {
	return chanCase{h: c.h, sh: c.sh, when: c.h.When(), recv: true}
}

func (c *RecvC[T]) do(r *run, sel *selState) bool {
	h := c.h
	if h == nil {
		return false
	}
	sh := c.sh
	if sh == nil {
		sh = r.shadows[unsafe.Pointer(h)]
	}
	if sh != nil && len(sh.stash) > 0 {
		v := sh.stash[0]
		sh.stash = sh.stash[1:]
		c.V, _ = v.val.(T)
		c.OK = v.ok
		return true
	}
	if h.Qcount == 0 && sh != nil {
		// A controlled sender waits: take its value, as the runtime
		// takes it from a blocked sender.
		if e := firstLive(sh.senders, sel); e != nil && h.Closed == 0 {
			if h.Dataqsiz == 0 {
				c.V = e.pusher.(*SendC[T]).v
				c.OK = true
				r.complete(e)
				sh.senders = removeEntry(sh.senders, e)
				return true
			}
		}
	}
	select {
	case v, ok := <-c.ch:
		c.V, c.OK = v, ok
		// A controlled sender blocked on the full buffer moves its value
		// into the slot just freed, as the runtime does.
		if ok && h.Dataqsiz > 0 && sh != nil {
			if e := firstLive(sh.senders, nil); e != nil && e.pusher.push() {
				r.complete(e)
				sh.senders = removeEntry(sh.senders, e)
			}
		}
		return true
	default:
		return false
	}
}

// unreceive keeps the value this case received for real for the next
// controlled receive from the channel.
func (c *RecvC[T]) unreceive(r *run) {
	sh := r.shadowOf(c.h)
	sh.stash = append(sh.stash, stashed{c.V, c.OK})
	var zero T
	c.V, c.OK = zero, false
}

func (c *RecvC[T]) enqueue(r *run, sel *selState, idx int) {
	if c.h == nil {
		return
	}
	c.e, c.enq = entry{sel: sel, idx: idx}, true
	if c.sh == nil {
		c.sh = r.shadowOf(c.h)
	}
	c.sh.receivers = append(c.sh.receivers, &c.e)
}

func (c *RecvC[T]) dequeue(*run) {
	if c.enq {
		c.sh.receivers = removeEntry(c.sh.receivers, &c.e)
	}
}

func (c *RecvC[T]) matched() {
	c.V, _ = c.e.val.(T)
	c.OK = c.e.ok
}

func (c *RecvC[T]) reflectCase() reflect.SelectCase {
	return reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.ch)}
}

func (c *RecvC[T]) try() bool {
	select {
	case v, ok := <-c.ch:
		c.V, c.OK = v, ok
		return true
	default:
		return false
	}
}

func (c *RecvC[T]) fromReflect(v reflect.Value, ok bool) {
	if v.IsValid() {
		c.V, _ = v.Interface().(T)
	}
	c.OK = ok
}

// SendC is a send case.
type SendC[T any] struct {
	ch  chan<- T
	v   T
	h   *hchan
	e   entry
	enq bool    // e was enqueued
	sh  *shadow // h's, once enqueued (or before: reuse)
}

// SendCase returns the case `ch <- v` of a select (v is evaluated here,
// as Go evaluates it on entering the select).
func SendCase[T any](ch chan<- T, v T) *SendC[T] {
	return &SendC[T]{ch: ch, v: v, h: rtlayout.ChanOf(unsafe.Pointer(&ch))}
}

func (c *SendC[T]) hc() *hchan { return c.h }

func (c *SendC[T]) ready(r *run, sel *selState) bool { return r.caseReady(c.h, false, c.sh, sel) }

func (c *SendC[T]) chanCase() chanCase { return chanCase{h: c.h, sh: c.sh} }

func (c *SendC[T]) do(r *run, sel *selState) bool {
	h := c.h
	if h == nil {
		return false
	}
	if h.Closed == 0 && h.Qcount == 0 {
		sh := c.sh
		if sh == nil {
			sh = r.shadows[unsafe.Pointer(h)]
		}
		if sh != nil {
			if e := firstLive(sh.receivers, sel); e != nil {
				e.val, e.ok = c.v, true
				r.complete(e)
				sh.receivers = removeEntry(sh.receivers, e)
				return true
			}
		}
	}
	select {
	case c.ch <- c.v: // panics, as Go does, if the channel is closed
		return true
	default:
		return false
	}
}

func (c *SendC[T]) enqueue(r *run, sel *selState, idx int) {
	if c.h == nil {
		return
	}
	c.e, c.enq = entry{sel: sel, idx: idx, pusher: c}, true
	if c.sh == nil {
		c.sh = r.shadowOf(c.h)
	}
	c.sh.senders = append(c.sh.senders, &c.e)
}

// push puts the value into the channel's buffer if there is room.
func (c *SendC[T]) push() bool {
	select {
	case c.ch <- c.v:
		return true
	default:
		return false
	}
}

func (c *SendC[T]) dequeue(*run) {
	if c.enq {
		c.sh.senders = removeEntry(c.sh.senders, &c.e)
	}
}

func (c *SendC[T]) matched() {}

func (c *SendC[T]) reflectCase() reflect.SelectCase {
	return reflect.SelectCase{Dir: reflect.SelectSend, Chan: reflect.ValueOf(c.ch), Send: reflect.ValueOf(&c.v).Elem()}
}

func (c *SendC[T]) fromReflect(reflect.Value, bool) {}

func (c *SendC[T]) try() bool { return c.push() }

// Operation codes, mixed into the checksum with each step.
const (
	opSend uint64 = iota + 1
	opRecv
	opClose
	opSelect
	opGo
	opYield
	opLock
	opUnlock
	opRLock
	opRUnlock
	opWait
	opSignal
	opOnce
	opAtomic
	opSleep
)

// Select runs a select statement whose cases are cases (in source order)
// and returns the index of the case chosen, or -1 for the default case
// (only if hasDefault). Under control the scheduler chooses among the
// ready cases; a select with no ready case and no default blocks.
func Select(hasDefault bool, cases ...Case) int {
	r, g := current()
	if g == nil {
		return realSelect(hasDefault, cases, nil)
	}
	name := "select"
	if len(cases) == 0 {
		name = "select {}"
	}
	sw := reuse[selWait](g) // as a plain operation's
	i := r.selectCases(g, hasDefault, cases, name, opSelect, sw)
	*sw = selWait{}
	keep(g, sw)
	return i
}

// realSelect performs the select for real. With cancel, it is one more
// case and -2 means cancelled.
func realSelect(hasDefault bool, cases []Case, cancel <-chan struct{}) int {
	if hasDefault && len(cases) == 1 {
		// One case and default, without reflect.
		if cases[0].try() {
			return 0
		}
		return -1
	}
	sc := make([]reflect.SelectCase, 0, len(cases)+1)
	for _, c := range cases {
		sc = append(sc, c.reflectCase())
	}
	switch {
	case hasDefault:
		sc = append(sc, reflect.SelectCase{Dir: reflect.SelectDefault})
	case cancel != nil:
		sc = append(sc, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(cancel)})
	}
	i, v, ok := reflect.Select(sc)
	if i == len(cases) {
		if hasDefault {
			return -1
		}
		return -2
	}
	cases[i].fromReflect(v, ok)
	return i
}

// selectCases runs a select of g; sw is the zero selWait to use.
func (r *run) selectCases(g *gor, hasDefault bool, cases []Case, name string, op uint64, sw *selWait) int {
	if hasDefault {
		r.yield(g, op)
		return r.tryCases(g, cases, nil)
	}
	sw = newSelWait(sw, cases)
	sw.sel.g = g
	sel := &sw.sel
	tick := anyTicker(cases)
	for {
		sw.cases = sw.cases[:0]
		for i, c := range cases {
			c.enqueue(r, sel, i)
			sw.cases = append(sw.cases, c.chanCase())
		}
		gotExt := r.block(g, op, wait{op: name, sel: sw, tick: tick})
		for _, c := range cases {
			c.dequeue(r)
		}
		if sel.done {
			cases[sel.idx].matched()
			return sel.idx
		}
		if gotExt {
			// The real select took the case whose event came first; other
			// cases may have become ready at the same instant (timers of
			// the same virtual instant fire in an order the runtime
			// randomizes). The received value is put back and the
			// schedule chooses among the ready cases, as on any decision.
			extIdx := sw.extIdx
			if u, ok := cases[extIdx].(interface{ unreceive(*run) }); ok && len(cases) > 1 && othersReady(r, cases, extIdx, sel) {
				u.unreceive(r)
				if i := r.tryCases(g, cases, sel); i >= 0 {
					return i
				}
			}
			return extIdx
		}
		if i := r.tryCases(g, cases, sel); i >= 0 {
			return i
		}
	}
}

func othersReady(r *run, cases []Case, except int, sel *selState) bool {
	for i, c := range cases {
		if i != except && c.ready(r, sel) {
			return true
		}
	}
	return false
}

// tryCases completes one of the ready cases, chosen by the schedule, or
// returns -1 if none is ready.
func (r *run) tryCases(g *gor, cases []Case, sel *selState) int {
	var ready [8]int
	idx := ready[:0]
	for i, c := range cases {
		if c.ready(r, sel) {
			idx = append(idx, i)
		}
	}
	for len(idx) > 0 {
		k := 0
		if len(idx) > 1 {
			k = r.pickCase(g, len(idx))
		}
		i := idx[k]
		if cases[i].do(r, sel) {
			return i
		}
		idx = slices.Delete(idx, k, k+1)
	}
	return -1
}

// sendOp is a plain send: its case, the list of it and its wait in one
// allocation, which the goroutine uses again for its next plain send of
// the same type (reuse).
type sendOp[T any] struct {
	c   SendC[T]
	cs  [1]Case
	sw  selWait
	gen uint64 // the run whose shadow c.sh is, once used
}

// recvOp is a plain receive, as sendOp.
type recvOp[T any] struct {
	c   RecvC[T]
	cs  [1]Case
	sw  selWait
	gen uint64
}

// Send is `ch <- v`.
func Send[T any](ch chan<- T, v T) {
	r, g := current()
	if g == nil {
		ch <- v
		return
	}
	o := reuse[sendOp[T]](g)
	h, sh := rtlayout.ChanOf(unsafe.Pointer(&ch)), o.c.sh
	if h != o.c.h || o.gen != r.gen {
		sh = nil
	}
	o.c = SendC[T]{ch: ch, v: v, h: h, sh: sh}
	o.cs[0] = &o.c
	r.selectCases(g, false, o.cs[:], "chan send", opSend, &o.sw)
	*o = sendOp[T]{c: SendC[T]{h: h, sh: o.c.sh}, gen: r.gen}
	keep(g, o)
}

// reuse returns one of g's two latest plain sends or receives (keep) if
// it is an O, else a new one: once one returned, nothing refers to it
// but g, and a goroutine makes one at a time (a worker that receives
// tasks and sleeps in them allocates twice, not twice per task). Its
// channel and that channel's shadow are kept, for the next on it in the
// same run.
func reuse[O any](g *gor) *O {
	for i, op := range g.op {
		if o, ok := op.(*O); ok {
			g.op[i] = nil
			return o
		}
	}
	return new(O)
}

// keep makes o the latest of g's two (reuse).
func keep(g *gor, o any) {
	if g.op[0] != nil {
		g.op[1] = g.op[0]
	}
	g.op[0] = o
}

// Recv is `<-ch`.
func Recv[T any](ch <-chan T) T {
	v, _ := Recv2(ch)
	return v
}

// Recv2 is `v, ok := <-ch`.
func Recv2[T any](ch <-chan T) (T, bool) {
	r, g := current()
	if g == nil {
		v, ok := <-ch
		return v, ok
	}
	o := reuse[recvOp[T]](g)
	h, sh := rtlayout.ChanOf(unsafe.Pointer(&ch)), o.c.sh
	if h != o.c.h || o.gen != r.gen {
		sh = nil
	}
	o.c = RecvC[T]{ch: ch, h: h, sh: sh}
	o.cs[0] = &o.c
	r.selectCases(g, false, o.cs[:], "chan receive", opRecv, &o.sw)
	v, ok := o.c.V, o.c.OK
	*o = recvOp[T]{c: RecvC[T]{h: h, sh: o.c.sh}, gen: r.gen}
	keep(g, o)
	return v, ok
}

// Close is `close(ch)`: a yield point, then the real close (which panics
// as Go does on a closed or nil channel). Controlled goroutines blocked on
// ch see it closed at the next decision.
func Close[T any](ch chan<- T) {
	r, g := current()
	if g != nil {
		r.yield(g, opClose)
	}
	close(ch)
}

// Sender is a channel to send on: To(ch).Send(v) is `ch <- v` with v
// converted to the channel's element type as Go converts it (the element
// type is inferred from the channel alone, so that `ch <- &impl{}` on a
// channel of an interface type compiles).
type Sender[T any] struct{ ch chan<- T }

// To returns ch as a Sender.
func To[T any](ch chan<- T) Sender[T] { return Sender[T]{ch} }

// Send is `ch <- v`.
func (s Sender[T]) Send(v T) { Send(s.ch, v) }

// Case is the select case `ch <- v`.
func (s Sender[T]) Case(v T) *SendC[T] { return SendCase(s.ch, v) }

// timersReadable: rtlayout.TimersReadable (elsewhere timers fire only
// once every controlled goroutine is blocked).
var timersReadable = rtlayout.TimersReadable

// realReady reports whether an operation on h (a receive if recv, else a
// send) may complete for real now: by the channel's descriptor
// (rtlayout's RecvNow and SendNow) or a timer whose time came.
func (r *run) realReady(h *hchan, recv bool) bool {
	if recv {
		return h.RecvNow() || h.Timer != nil && r.timerDue(h.Timer)
	}
	return h.SendNow()
}

// timerDue reports whether t, the timer of a channel, is one whose time has
// come although its value is not in the channel yet: the runtime sends it
// only when the channel is received from (timers of channels nobody waits
// on are run lazily), so the descriptor alone would say "not ready" and
// the real select that follows would choose at random among this and
// other cases ready at the same instant.
func (r *run) timerDue(t unsafe.Pointer) bool {
	if !timersReadable {
		return false
	}
	w := *rtlayout.WhenOf(t)
	return w > 0 && w <= r.now()
}
