package checker

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execspec/execspec/model"
)

// The parallel explorer is level-synchronous breadth-first search over a
// store sharded by hash:
//
//  1. Expand: the current level is cut into chunks of chunkLen states; worker
//     g expands chunks g, g+P, g+2P, … It unpacks each state, generates its
//     successors, checks the invariants on each, packs it, and appends it
//     to the chunk's outbox for the shard its hash selects.
//  2. Insert: goroutine s owns shard s and inserts the outboxes of every
//     chunk, in chunk order, into its shard; the new states are the next
//     level.
//
// No lock is taken and no state is shared while written. Chunk order makes
// the ids, and so the counterexamples, independent of timing; the counts are
// those of the sequential search. (A shared lock-free table, as in Spin's
// multi-core mode, is the alternative; it was not taken because it makes the
// state ids, and so the reported counterexample, depend on the timing.)

const (
	chunkLen    = 512
	batchChunks = 128 // 64k states expanded before their successors are inserted

	minParallelChunks = 8 // narrower batches are expanded by one goroutine
)

// outbox holds the successors one chunk sends to one shard: for each,
// hash<<32|parent then the packed words.
type outbox struct{ recs []uint64 }

// finding is a violation seen while expanding: the first in a chunk, in
// generation order.
type finding struct {
	prop, msg string
	id        uint32 // the state it was found in (stuck) or from (a step)
	step      model.Step
	hasStep   bool
	stepErr   bool // the step itself was refused (no state after it)
}

func (e *explorer) parallel() *Result {
	P := e.opts.Parallel
	if P <= 0 {
		P = runtime.GOMAXPROCS(0)
	}
	// More shards than goroutines, handed out dynamically, so that a
	// goroutine the OS deschedules does not hold up the others at the end
	// of a phase.
	bits := uint(0)
	for 1<<bits < 8*P {
		bits++
	}
	S := 1 << bits
	e.shardBits = bits
	e.shards = make([]*store, S)
	for s := range e.shards {
		e.shards[s] = newStore(e.lay.Words())
	}
	e.st = nil
	words := e.lay.Words()

	// The initial state goes to its shard.
	buf := make([]uint64, words)
	s0 := e.m.Init()
	if e.sym != nil {
		e.sym.canon(s0)
	}
	e.lay.Pack(s0, buf)
	h := hashWords(buf)
	sh := shardOf(h, bits)
	local, _ := e.shards[sh].insert(buf, h, noParent)
	if inv, err := e.checkInvariants(s0); inv != nil {
		return e.safetyViolation(inv.Name, err.Error(), local<<bits|uint32(sh), nil)
	}

	lo := make([]uint32, S) // the current level: shard s's states lo[s]..hi[s]
	hi := make([]uint32, S)
	for s := range hi {
		hi[s] = e.shards[s].n
	}
	type worker struct {
		cur, next *model.State
		sym       *symmetry
		buf       []uint64
		trans     int64
	}
	ws := make([]*worker, P)
	for g := range ws {
		ws[g] = &worker{cur: e.m.Init(), next: e.m.Init(), buf: make([]uint64, words)}
		if e.sym != nil {
			ws[g].sym = newSymmetry(e.m, e.lay)
		}
	}
	var boxes [][]outbox // [chunk][shard]
	var finds []*finding // [chunk]
	lastReport := time.Now()
	for {
		// The level's states, as a list of (shard, first, last) chunks.
		type chunk struct {
			shard    int
			from, to uint32
		}
		var chunks []chunk
		width := int64(0)
		for s := 0; s < S; s++ {
			for a := lo[s]; a < hi[s]; a += chunkLen {
				b := min(a+chunkLen, hi[s])
				chunks = append(chunks, chunk{s, a, b})
			}
			width += int64(hi[s] - lo[s])
		}
		if len(chunks) == 0 {
			break
		}
		if why := e.budget(e.count()); why != "" {
			e.res.Verdict, e.res.Message = Unknown, why
			return e.res
		}
		next := make([]uint32, S) // where the next level starts in each shard
		for s := 0; s < S; s++ {
			next[s] = e.shards[s].n
		}
		// A batch of chunks at a time, so that the outboxes stay small.
		all := chunks
		for b0 := 0; b0 < len(all); b0 += batchChunks {
			chunks := all[b0:min(b0+batchChunks, len(all))]
			for len(boxes) < len(chunks) {
				boxes = append(boxes, make([]outbox, S))
				finds = append(finds, nil)
			}
			for c := range chunks {
				for s := range boxes[c] {
					boxes[c][s].recs = boxes[c][s].recs[:0]
				}
				finds[c] = nil
			}
			// 1. Expand.
			// Chunks are handed out in order through an atomic counter. A
			// finding in chunk c stops the hand-out of chunks after c, but
			// every chunk before c is finished, so the finding reported,
			// the one in the lowest chunk, does not depend on the timing.
			var wg sync.WaitGroup
			var nextChunk atomic.Int64
			var stopAt atomic.Int64
			stopAt.Store(int64(len(chunks)))
			// A narrow batch is expanded on this goroutine: waking others
			// for it costs more than it saves, most of all on a busy machine.
			par := P
			if len(chunks) < minParallelChunks {
				par = 1
			}
			for g := 0; g < par; g++ {
				wg.Add(1)
				run := func(g int) {
					defer wg.Done()
					w := ws[g]
					for {
						c := int(nextChunk.Add(1) - 1)
						if c >= len(chunks) || int64(c) >= stopAt.Load() {
							return
						}
						if g == 0 && e.opts.Progress != nil && time.Since(lastReport) >= time.Second {
							lastReport = time.Now()
							e.progress(width)
						}
						ch := chunks[c]
						st := e.shards[ch.shard]
						for i := ch.from; i < ch.to; i++ {
							id := i<<bits | uint32(ch.shard)
							e.lay.Unpack(st.state(i), w.cur)
							count := 0
							var f *finding
							e.m.Next(w.cur, w.next, func(step model.Step, nx *model.State, err error) bool {
								count++
								w.trans++
								if err != nil {
									f = &finding{prop: TakeQueuedOnly, msg: err.Error(), id: id, step: step, hasStep: true, stepErr: true}
									return false
								}
								if inv, err := e.checkInvariants(nx); inv != nil {
									f = &finding{prop: inv.Name, msg: err.Error(), id: id, step: step, hasStep: true}
									return false
								}
								if w.sym != nil {
									w.sym.canon(nx)
								}
								if !e.lay.Pack(nx, w.buf) {
									f = &finding{prop: model.Invariants[1].Name, msg: "a queue grew longer than any correct run allows", id: id, step: step, hasStep: true}
									return false
								}
								h := hashWords(w.buf)
								box := &boxes[c][shardOf(h, bits)]
								box.recs = append(box.recs, uint64(h)<<32|uint64(id))
								box.recs = append(box.recs, w.buf...)
								return true
							})
							if f == nil && count == 0 && !w.cur.AllDone() {
								f = &finding{prop: model.NoStuckState, msg: "no rule is enabled but not every task is DONE: " + stuckTasks(w.cur), id: id}
							}
							if f != nil {
								finds[c] = f
								for {
									old := stopAt.Load()
									if int64(c) >= old || stopAt.CompareAndSwap(old, int64(c)) {
										break
									}
								}
								break
							}
						}
						if e.ctx.Err() != nil {
							stopAt.Store(0)
							return
						}
					}
				}
				if par == 1 {
					run(g)
				} else {
					go run(g)
				}
			}
			wg.Wait()
			e.transitions = 0
			for _, w := range ws {
				e.transitions += w.trans
			}
			for c := range chunks {
				if f := finds[c]; f != nil {
					return e.finding(f)
				}
			}
			if why := e.budget(e.count()); why != "" {
				e.res.Verdict, e.res.Message = Unknown, why
				return e.res
			}
			// 2. Insert, one goroutine per shard, chunks in order.
			var nextShard atomic.Int64
			for g := 0; g < par; g++ {
				wg.Add(1)
				run := func() {
					defer wg.Done()
					for {
						s := int(nextShard.Add(1) - 1)
						if s >= S {
							return
						}
						st := e.shards[s]
						stride := 1 + words
						for c := range chunks {
							recs := boxes[c][s].recs
							for k := 0; k+stride <= len(recs); k += stride {
								st.insert(recs[k+1:k+stride], uint32(recs[k]>>32), uint32(recs[k]))
							}
						}
					}
				}
				if par == 1 {
					run()
				} else {
					go run()
				}
			}
			wg.Wait()
		}
		copy(lo, next)
		grew := false
		for s := 0; s < S; s++ {
			hi[s] = e.shards[s].n
			if hi[s] > lo[s] {
				grew = true
			}
		}
		if !grew {
			break
		}
		e.depth++
	}
	e.res.Verdict = Holds
	return e.res
}

// shardOf picks a shard from the hash's middle bits: the low bits choose
// the slot within a shard's table and the high bits are its tag.
func shardOf(h uint32, bits uint) int {
	if bits == 0 {
		return 0
	}
	return int((h * 0x9e3779b1) >> (32 - bits))
}

func (e *explorer) finding(f *finding) *Result {
	if !f.hasStep {
		return e.safetyViolation(f.prop, f.msg, f.id, nil)
	}
	if f.stepErr {
		return e.safetyViolation(f.prop, f.msg, f.id, &f.step)
	}
	r := e.safetyViolation(f.prop, f.msg, f.id, &f.step)
	// The step reached a state: show it.
	cx := r.Counterexample
	last := cx.Init
	if n := len(cx.Steps); n >= 2 {
		last = cx.Steps[n-2].State
	}
	s := last.Clone()
	if err := e.m.Apply(s, f.step); err == nil {
		cx.Steps[len(cx.Steps)-1].State = s
	}
	return r
}
