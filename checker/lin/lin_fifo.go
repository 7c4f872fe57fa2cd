package lin

import (
	"fmt"
	"sort"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/checker"
)

// linFIFODecide decides a window of a strict-FIFO queue without a search,
// in O(n log n), when it can: every operation returned, every take found an
// element at the head (no empty takes, no other ends), and values are told
// apart by renaming the k-th push of a value and its k-th take. For such
// histories a FIFO queue is linearizable exactly when none of these holds
// (Henzinger, Sezgin and Vafeiadis, "Aspect-oriented linearizability
// proofs", CONCUR 2013):
//
//   - fresh: a take returns a value that was not pushed, or returns before
//     that push was called;
//   - order: push(x) returned before push(y) was called, y was taken, and x
//     was not taken, or was taken only after take(y) returned.
//
// (A value taken twice is, after renaming, a take of a value not pushed.)
// With end set, the queue must also end empty: every push was taken.
//
// A value pushed more than once in the window (a task re-queued) is renamed
// by pairing its pushes and its takes in the order of their returns. Any
// pairing that passes shows a linearization of the window, so Holds stands;
// but another pairing might pass where this one fails, so a violation is
// only reported when no value repeats, and is Unknown otherwise.
//
// It returns Holds or Violated with a detail, or Unknown when the window is
// not of that form, and then porcupine decides.
func linFIFODecide(ops []porcupine.Operation) (checker.Verdict, string) {
	v, why, repeats := linFIFOAspects(ops)
	if v == checker.Violated && repeats {
		return checker.Unknown, ""
	}
	return v, why
}

func linFIFOAspects(ops []porcupine.Operation) (v checker.Verdict, why string, repeats bool) {
	type key struct {
		v int64
		k int
	}
	type iv struct {
		call, ret int64
		seq       uint64
	}
	push := map[key]iv{}
	take := map[key]iv{}
	npush := map[int64]int{}
	ntake := map[int64]int{}
	end := false
	// Operations in return order: the k-th push of a value pairs with its
	// k-th take.
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ops[idx[a]].Return < ops[idx[b]].Return })
	for _, i := range idx {
		op := ops[i]
		in, ok := op.Input.(linQueueIn)
		if !ok {
			return checker.Unknown, "", false
		}
		switch {
		case in.end:
			end = true
			continue
		case in.load != nil:
			// The window's initial content, pushed in order before it.
			for j, v := range in.load {
				t := op.Call - int64(2*(len(in.load)-j))
				push[key{v, npush[v]}] = iv{t, t, 0}
				npush[v]++
			}
			continue
		}
		if op.Return >= linInf {
			return checker.Unknown, "", false
		}
		switch in.kind {
		case Push:
			push[key{in.value, npush[in.value]}] = iv{op.Call, op.Return, in.seq}
			npush[in.value]++
		case TakeHead:
			if in.value == 0 || len(in.moved) > 0 {
				return checker.Unknown, "", false
			}
			take[key{in.value, ntake[in.value]}] = iv{op.Call, op.Return, in.seq}
			ntake[in.value]++
		default:
			return checker.Unknown, "", false
		}
	}
	for _, n := range npush {
		repeats = repeats || n > 1
	}
	for _, n := range ntake {
		repeats = repeats || n > 1
	}
	// fresh
	for k, t := range take {
		p, ok := push[k]
		switch {
		case !ok && k.k == 0:
			return checker.Violated, fmt.Sprintf("%d taken%s but never pushed", k.v, at(t.seq)), repeats
		case !ok:
			return checker.Violated, fmt.Sprintf("%d taken %d times but pushed %d times", k.v, k.k+1, npush[k.v]), repeats
		case t.ret < p.call:
			return checker.Violated, fmt.Sprintf("%d taken%s before it was pushed%s", k.v, at(t.seq), at(p.seq)), repeats
		}
	}
	if end {
		for k := range push {
			if _, ok := take[k]; !ok {
				return checker.Violated, fmt.Sprintf("%d pushed and never taken: the queue does not end empty", k.v), repeats
			}
		}
	}
	// order: sort pushes by return; for each taken y, look at the pushes
	// x that returned before push(y) was called, and the latest call of
	// their takes (+inf if not taken).
	type px struct {
		k        key
		ret      int64
		takeCall int64
		takeSeq  uint64
	}
	ps := make([]px, 0, len(push))
	for k, p := range push {
		tc, ts := int64(linInf), uint64(0)
		if t, ok := take[k]; ok {
			tc, ts = t.call, t.seq
		}
		ps = append(ps, px{k, p.ret, tc, ts})
	}
	sort.Slice(ps, func(a, b int) bool { return ps[a].ret < ps[b].ret })
	best := make([]int, len(ps)) // index of the latest take call in ps[:i+1]
	for i := range ps {
		best[i] = i
		if i > 0 && ps[best[i-1]].takeCall > ps[i].takeCall {
			best[i] = best[i-1]
		}
	}
	for y, ty := range take {
		py := push[y]
		n := sort.Search(len(ps), func(i int) bool { return ps[i].ret >= py.call })
		if n == 0 {
			continue
		}
		x := ps[best[n-1]]
		if x.takeCall > ty.ret {
			if x.takeCall == linInf {
				return checker.Violated, fmt.Sprintf("%d pushed before %d, but %d taken%s while %d stayed queued: not FIFO", x.k.v, y.v, y.v, at(ty.seq), x.k.v), repeats
			}
			return checker.Violated, fmt.Sprintf("%d pushed before %d, but %d taken%s before %d%s: not FIFO", x.k.v, y.v, y.v, at(ty.seq), x.k.v, at(x.takeSeq)), repeats
		}
	}
	return checker.Holds, "", repeats
}

// at names an event by its sequence number, if it has one.
func at(seq uint64) string {
	if seq == 0 {
		return ""
	}
	return fmt.Sprintf(" (event %d)", seq)
}
