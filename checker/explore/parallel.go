package explore

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// The parallel explorer is level-synchronous breadth-first search over one
// store shared by every goroutine, whose hash table is updated lock-free
// (compare-and-swap on its 32-bit slots). It numbers the states exactly as
// the sequential search does (in the order in which they are first
// generated), so the counts, the state ids and therefore the
// counterexamples are those of a sequential run, whatever the timing.
//
// The current level is cut into chunks of consecutive states, handed out
// in order through an atomic counter, a batch of chunks at a time. Each
// batch goes through four phases, every goroutine working in each:
//
//  1. Expand: unpack each state, generate its successors, pack each into
//     the chunk's outbox (no shared write). A refused take, a queue that
//     overflows, or a stuck state is a finding of the chunk.
//  2. Claim: look each successor up in the shared table; most are stored
//     already. A new one claims a slot with a pending entry that names its
//     position in sequential order (its claim). Two goroutines that meet
//     on the same new state keep the smaller claim: a later copy gives up,
//     an earlier one takes the slot over (compare-and-swap) and flags the
//     copy it displaced as lost, so the copy generated first in sequential
//     order wins, whoever came first.
//  3. Count: a claim that is neither lost nor given up is a new state. A
//     prefix sum over the chunks gives each chunk the first id of its new
//     states.
//  4. Store: each chunk copies its new states to their ids, records their
//     parents, writes the id into the slot it owns (a plain store: no other
//     goroutine touches that slot in this phase), and checks the invariants
//     on them (a finding at the successor's place).
//
// For a liveness property a fifth phase appends the batch's edges to the
// graph in sequential order, reading a lost copy's id from its slot.
//
// The finding reported is the first in sequential order (chunk, then
// position in the chunk), so it is the one the sequential search reports.
// Slots are 32 bits: a pending flag, a tag of the hash's high bits, and an
// id+1 or claim+1 below them, as in the sequential store.
//
// Goroutines write, on every transition, their own scratch space and
// States: both are padded off each other's cache lines (model.State is
// carved from padded blocks); without that the expand phase cost twice the
// CPU on two cores.
//
// The alternative rejected: a table per shard with an owner goroutine per
// shard (no atomics). It needs its own pass to move every successor to its
// shard, numbers states by shard, so the ids depend on the shard count, and
// checked invariants on every successor rather than on new states only.

const (
	maxChunkLen = 512
	batchChunks = 128 // at most 64k states expanded per batch

	minParallelStates = 64 // narrower levels are expanded by one goroutine
	pendingBit        = 1 << 31
)

// chunkOut holds what one chunk of a batch produced.
type chunkOut struct {
	from, to uint32   // the chunk's states
	recs     []uint64 // per successor: hash<<32|parent, then the packed words
	res      []uint64 // per successor, after the claim phase: found<<63|id, lost<<62|slot, or the slot; after the store phase, a new state's found<<63|id
	done     bool     // expanded to its end or to its finding
	base     uint32   // the id of its first new state
	wins     uint32   // its new states
	claim0   uint32   // the claim of its first record
	touched  uint32   // what the claim phase read ahead (kept so that the reads stay)
	// For a liveness property, the graph: per successor the process that
	// steps, per state its number of successors and its enabled processes.
	procs   []uint8
	nsucc   []uint32
	enabled []uint64
	find    *finding // the first finding in phase 1
	findAt  int      // the record index it comes before
	invFind *finding // the first invariant broken by a new state (phase 4)
	invAt   int
}

// finding is a violation seen while exploring.
type finding struct {
	prop, msg string
	id        uint32 // the state it was found in (stuck) or from (a step)
	step      model.Step
	hasStep   bool
}

// pworker is one goroutine's scratch space. Goroutines write theirs on
// every transition, so it is padded to keep it off every other's cache lines
// (the buffers too: see newPworker).
type pworker struct {
	_         [64]byte
	cur, next *model.State
	sym       *symmetry
	buf, sbuf []uint64
	trans     int64
	_         [64]byte
}

func newPworker(e *explorer, words int) *pworker {
	w := &pworker{cur: e.m.Init(), next: e.m.Init(), buf: padded(words), sbuf: padded(words)}
	if e.sym != nil {
		w.sym = newSymmetry(e.m, e.lay)
	}
	return w
}

// padded returns n words with a cache line of unused words on either side.
func padded(n int) []uint64 {
	return make([]uint64, 8+n+8)[8 : 8+n : 8+n]
}

func (e *explorer) workers() int {
	P := e.opts.Parallel
	if P <= 0 {
		P = runtime.GOMAXPROCS(0)
	}
	return P
}

// each runs f(g, c) for c in [0, n) on par goroutines (g is the goroutine's
// index; 0 is the caller), handing out c in increasing order. If busy is
// set, the time each goroutine spends in the loop is added to it.
func each(par, n int, busy *atomic.Int64, f func(g, c int) bool) {
	if n == 0 {
		return
	}
	var next atomic.Int64
	run := func(g int) {
		if busy != nil {
			t0 := time.Now()
			defer func() { busy.Add(int64(time.Since(t0))) }()
		}
		for {
			c := int(next.Add(1) - 1)
			if c >= n || !f(g, c) {
				return
			}
		}
	}
	if par <= 1 || n == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for g := 1; g < min(par, n); g++ {
		wg.Add(1)
		go func() { defer wg.Done(); run(g) }()
	}
	run(0)
	wg.Wait()
}

func (e *explorer) parallel() *Result {
	P := e.workers()
	e.par = P
	st := e.st
	words := e.lay.Words()
	stride := 1 + words
	buf := make([]uint64, words)
	if r := e.root(buf); r != nil {
		return r
	}
	ws := make([]*pworker, P)
	for g := range ws {
		ws[g] = newPworker(e, words)
	}
	var outs []*chunkOut
	var cl claims
	lastReport := time.Now()
	lo, hi := uint32(0), st.n // the current level
	e.levels = append(e.levels[:0], lo, hi)
	for lo < hi {
		width := hi - lo
		clen := uint32(maxChunkLen)
		for clen > 16 && width/clen < uint32(4*P) {
			clen /= 2
		}
		for b0 := lo; b0 < hi; b0 += clen * batchChunks {
			if why := e.budget(int64(st.n)); why != "" {
				e.res.Verdict, e.res.Message = checker.Unknown, why
				return e.res
			}
			if e.opts.Progress != nil && time.Since(lastReport) >= time.Second {
				lastReport = time.Now()
				e.progress(int64(hi - b0))
			}
			b1 := min(b0+clen*batchChunks, hi)
			nc := int((b1 - b0 + clen - 1) / clen)
			for len(outs) < nc {
				outs = append(outs, &chunkOut{})
			}
			batch := outs[:nc]
			for c, o := range batch {
				o.from = b0 + uint32(c)*clen
				o.to = min(o.from+clen, b1)
				o.recs, o.res = o.recs[:0], o.res[:0]
				o.procs, o.nsucc, o.enabled = o.procs[:0], o.nsucc[:0], o.enabled[:0]
				o.done, o.find, o.invFind, o.wins = false, nil, nil, 0
			}
			par := P
			if b1-b0 < minParallelStates {
				par = 1
			}

			// 1. Expand. A finding in chunk c stops the hand-out of later
			// chunks; every chunk before it is finished.
			var stopAt atomic.Int64
			stopAt.Store(int64(nc))
			each(par, nc, &e.busy, func(g, c int) bool {
				if int64(c) >= stopAt.Load() || e.ctx.Err() != nil {
					return false
				}
				if f := e.expandChunk(ws[g], batch[c]); f {
					for {
						old := stopAt.Load()
						if int64(c) >= old || stopAt.CompareAndSwap(old, int64(c)) {
							break
						}
					}
				}
				return true
			})
			if e.ctx.Err() != nil {
				e.res.Verdict, e.res.Message = checker.Unknown, e.budget(0)
				return e.res
			}
			e.transitions = 0
			for _, w := range ws {
				e.transitions += w.trans
			}
			// Only chunks up to the first with a finding count.
			if s := int(stopAt.Load()); s < nc {
				nc = s + 1
				batch = batch[:nc]
			}
			n := cl.reset(batch, stride)
			st.reserve(n, par)

			// 2. Claim.
			each(par, nc, &e.busy, func(g, c int) bool {
				e.claimChunk(batch, c, &cl)
				return true
			})
			// 3. Count.
			each(par, nc, &e.busy, func(g, c int) bool {
				o := batch[c]
				lost := cl.lost[o.claim0:]
				for k, r := range o.res {
					if r>>62 == 0 && !lost[k] {
						o.wins++
					}
				}
				return true
			})
			next := st.n
			for _, o := range batch {
				o.base = next
				next += o.wins
			}
			st.ensure(next)
			if st.leaves != nil {
				st.leaves.reserve((next - st.n) * uint32(words))
			}
			// 4. Store and check.
			each(par, nc, &e.busy, func(g, c int) bool {
				e.storeChunk(ws[g], batch[c], cl.lost)
				return true
			})
			st.n = next
			for _, o := range batch {
				f, at := o.find, o.findAt
				if o.invFind != nil && (f == nil || o.invAt < at) {
					f = o.invFind
				}
				if f != nil {
					return e.finding(f)
				}
			}
			if e.live {
				e.graphBatch(par, batch)
			}
		}
		lo, hi = hi, st.n
		if hi > lo {
			e.depth++
			e.levels = append(e.levels, hi)
		}
	}
	if e.live {
		e.off = append(e.off, uint32(len(e.edges)))
	}
	e.res.Verdict = checker.Holds
	return e.res
}

// graphBatch appends the edges of a batch's states to the graph, in the
// order of the states and of their successors, as the sequential search
// does. A successor that lost its slot to an earlier copy of the same state
// finds that copy's id in the slot, where the store phase put it.
func (e *explorer) graphBatch(par int, batch []*chunkOut) {
	st := e.st
	base := make([]int, len(batch))
	edges, states := 0, 0
	for _, o := range batch {
		edges += len(o.res)
		states += len(o.nsucc)
	}
	e.graphRoom(edges, states)
	for c, o := range batch {
		base[c] = len(e.edges)
		e.edges = e.edges[:len(e.edges)+len(o.res)]
		e.procs = append(e.procs, o.procs...)
		at := uint32(base[c])
		for k, n := range o.nsucc {
			e.off = append(e.off, at)
			e.enabled = append(e.enabled, o.enabled[k])
			at += n
		}
	}
	tab, idxMask := st.table, st.idxMask
	each(par, len(batch), &e.busy, func(g, c int) bool {
		out := e.edges[base[c] : base[c]+len(batch[c].res)]
		for k, r := range batch[c].res {
			if r>>63 != 0 {
				out[k] = uint32(r)
			} else {
				out[k] = tab[uint32(r)]&idxMask - 1
			}
		}
		return true
	})
}

// expandChunk generates the successors of o's states into o's outbox. It
// reports whether it stopped at a finding.
func (e *explorer) expandChunk(w *pworker, o *chunkOut) bool {
	st := e.st
	// o and w sit near other goroutines' data: work on locals.
	recs, trans := o.recs, int64(0)
	procs, nsucc, enabled := o.procs, o.nsucc, o.enabled
	defer func() {
		o.recs, o.procs, o.nsucc, o.enabled = recs, procs, nsucc, enabled
		w.trans += trans
	}()
	stride := 1 + len(w.buf)
	for i := o.from; i < o.to; i++ {
		e.lay.Unpack(st.load(i, w.sbuf), w.cur)
		count, first := 0, len(recs)
		var mask uint64
		var f *finding
		e.m.Next(w.cur, w.next, func(step model.Step, nx *model.State, err error) bool {
			count++
			trans++
			if err != nil {
				f = &finding{prop: TakeQueuedOnly, msg: err.Error(), id: i, step: step, hasStep: true}
				return false
			}
			if w.sym != nil {
				w.sym.canon(nx)
			}
			if !e.lay.Pack(nx, w.buf) {
				f = &finding{prop: model.Invariants[1].Name, msg: "a queue grew longer than any correct run allows", id: i, step: step, hasStep: true}
				return false
			}
			recs = append(recs, uint64(hashWords(w.buf))<<32|uint64(i))
			recs = append(recs, w.buf...)
			if e.live {
				p := step.Proc(e.cfg.Workers)
				procs = append(procs, uint8(p))
				mask |= 1 << p
			}
			return true
		})
		if e.live {
			nsucc = append(nsucc, uint32((len(recs)-first)/stride))
			enabled = append(enabled, mask)
		}
		if f == nil && count == 0 && e.stuck && !w.cur.AllDone() {
			f = &finding{prop: model.NoStuckState, msg: "no rule is enabled but not every task is DONE: " + stuckTasks(w.cur), id: i}
		}
		if f != nil {
			o.find, o.findAt = f, len(recs)/stride
			o.done = true
			return true
		}
	}
	o.done = true
	return false
}

// claims indexes the successors of one batch by their claim (their
// position in sequential order).
type claims struct {
	chunk []uint16 // the batch's chunk that holds each claim
	// lost marks a claim displaced from its slot by an earlier copy of the
	// same state. Each is written at most once, by the displacing goroutine,
	// and read after the claim phase.
	lost []bool
}

// reset numbers the claims of batch and returns how many there are.
func (cl *claims) reset(batch []*chunkOut, stride int) uint32 {
	n := uint32(0)
	cl.chunk = cl.chunk[:0]
	for c, o := range batch {
		o.claim0 = n
		k := uint32(len(o.recs) / stride)
		n += k
		for range k {
			cl.chunk = append(cl.chunk, uint16(c))
		}
	}
	cl.lost = slices.Grow(cl.lost[:0], int(n))[:n]
	clear(cl.lost)
	return n
}

// claimAhead is how many successors ahead of the one it looks up the claim
// phase touches the table, so that the misses on a table larger than the
// caches overlap instead of following each other.
const claimAhead = 8

// claimChunk looks o's successors up in the shared table, claiming a slot
// for each one not stored yet. A successor that meets a pending claim on the
// same state from an earlier copy (in sequential order) is lost; one that
// meets a later copy's claim takes the slot over and marks that copy lost.
//
// It goes in two passes. The first only reads: it finds the successors
// already stored (most of them) and, for the others, the first slot that is
// empty or pending. The second claims those from there with
// compare-and-swap. A locked instruction waits for every load before it, so
// mixing the two would let each claim stall the reads ahead of it; apart,
// the reads overlap, and the claims find their slots in the cache.
func (e *explorer) claimChunk(batch []*chunkOut, c int, cl *claims) {
	st := e.st
	o := batch[c]
	stride := 1 + e.lay.Words()
	tab, mask, idxMask := st.table, st.mask, st.idxMask
	recs, res := o.recs, o.res[:0]
	n := len(recs) / stride
	var touched uint32
	for k := range n {
		if a := k + claimAhead; a < n {
			touched += atomic.LoadUint32(&tab[uint32(recs[a*stride]>>32)&mask])
		}
		h := uint32(recs[k*stride] >> 32)
		w := recs[k*stride+1 : (k+1)*stride]
		tag := h &^ idxMask &^ pendingBit
		slot := h & mask
		for {
			ent := atomic.LoadUint32(&tab[slot])
			if ent == 0 || ent&pendingBit != 0 {
				res = append(res, 1<<61|uint64(slot))
				break
			}
			if ent&^idxMask == tag {
				if id := ent&idxMask - 1; st.equal(id, w) {
					res = append(res, 1<<63|uint64(id))
					break
				}
			}
			slot = (slot + 1) & mask
		}
	}
	o.touched = touched
	for k, r := range res {
		if r>>61 != 1 {
			continue
		}
		h := uint32(recs[k*stride] >> 32)
		w := recs[k*stride+1 : (k+1)*stride]
		tag := h &^ idxMask &^ pendingBit
		mine := o.claim0 + uint32(k)
		slot := uint32(r)
	probe:
		for {
			ent := atomic.LoadUint32(&tab[slot])
			switch {
			case ent == 0:
				if atomic.CompareAndSwapUint32(&tab[slot], 0, pendingBit|tag|(mine+1)) {
					r = uint64(slot)
					break probe
				}
				continue // someone took it: look again
			case ent&^(pendingBit|idxMask) != tag:
			case ent&pendingBit == 0:
				if id := ent&idxMask - 1; st.equal(id, w) {
					r = 1<<63 | uint64(id)
					break probe
				}
			default:
				other := ent&idxMask - 1
				if other == mine {
					break
				}
				b := batch[cl.chunk[other]]
				at := int(other-b.claim0) * stride
				if uint32(b.recs[at]>>32) != h || !equalWords(b.recs[at+1:at+stride], w) {
					break
				}
				// The same new state, claimed by another copy: the
				// copy first in sequential order keeps it.
				if mine > other {
					r = 1<<62 | uint64(slot)
					break probe
				}
				if !atomic.CompareAndSwapUint32(&tab[slot], ent, pendingBit|tag|(mine+1)) {
					continue
				}
				cl.lost[other] = true
				r = uint64(slot)
				break probe
			}
			slot = (slot + 1) & mask
		}
		res[k] = r
	}
	o.res = res
}

// storeChunk gives o's new states their ids and checks the invariants on
// them. The slot of each new state is its own now: no other goroutine reads
// or writes it until the next batch.
func (e *explorer) storeChunk(w *pworker, o *chunkOut, lost []bool) {
	st := e.st
	stride := 1 + e.lay.Words()
	tab := st.table
	lost = lost[o.claim0:]
	id := o.base
	for k, r := range o.res {
		if r>>62 != 0 || lost[k] {
			continue
		}
		h := uint32(o.recs[k*stride] >> 32)
		ws := o.recs[k*stride+1 : (k+1)*stride]
		st.put(id, ws)
		st.setParent(id, uint32(o.recs[k*stride]))
		tab[r] = h&^st.idxMask&^pendingBit | (id + 1)
		o.res[k] = 1<<63 | uint64(id)
		if o.invFind == nil && len(e.invs) > 0 {
			e.lay.Unpack(ws, w.cur)
			if inv, err := e.checkInvariants(w.cur); inv != nil {
				o.invFind, o.invAt = &finding{prop: inv.Name, msg: err.Error(), id: id}, k
			}
		}
		id++
	}
}

func (e *explorer) finding(f *finding) *Result {
	if !f.hasStep {
		return e.safetyViolation(f.prop, f.msg, f.id, nil)
	}
	return e.safetyViolation(f.prop, f.msg, f.id, &f.step)
}
