package conform

import (
	"fmt"
	"maps"
	"slices"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// The search over readings of batch steals (steal-half, "order":"intervals").
//
// Each take under "order":"intervals" is read one way when it comes: the
// checker tries the orders of interval.Tries in turn (the take at its Seq, then
// the orders of Reader.Relax) and keeps the first the model accepts. For a
// batch steal that reading fixes which tasks the batch moved, how many
// (within half of the deque as read and steal-max) and in which order
// (whichever the deque's flavour allows); a take much later may refute it
// while another reading would have conformed. So a failed take (its
// premise, an obligation, a claim: the rules POLL-LOCAL, GLOBAL-STEAL and
// WORKER-STEAL) is not final at once: the checker replays the trace from
// its first event with one earlier take read otherwise, the nearest first,
// each of its readings in turn (a replay that skips the readings before
// position p of a take accepts the first one from p on), then with two
// of the nearest takes read otherwise at once. The first replay that gets
// past the failed event replaces the checker's state and the check goes
// on from there, with that reading kept; a later failure searches again
// on top of it.
//
// The readings tried are those the checker accepts anyway when the
// reading at Seq fails: every reading a replay keeps is one the model and
// the intervals allow, so a trace that holds this way holds. Bounds:
//
//   - memory: the events are kept for the replays, at most
//     confSearchEvents of them (80 bytes each, no pointer); past that, a failed take
//     gets no search, and its verdict is Unknown (Error.Limit says why);
//   - time: the takes searched are the confSearchNear nearest before the
//     failure (confSearchPairs for two at once), each replay replays the
//     trace so far, and one failure gets at most confSearchRuns replays
//     and the whole trace confSearchWork replayed events; when a budget
//     is spent before the readings within those takes are all tried, the
//     verdict is Unknown (Error.Limit), never a pass.
//
// When every reading within those takes was tried and none gets past the
// failure, the failure stands as the first reading found it: Violated.
// A trace that never fails pays one map lookup per take, and the copy of
// each event.
type confSearch struct {
	events [][]confKept   // every event so far, for the replays, in chunks of confKeptChunk (nil when over)
	nkept  int            // events kept
	detail map[int]string // by event index: the Detail of the events kept that have one
	over   bool           // the trace is longer than confSearchEvents
	dev    map[int]int    // by event index: the first position (interval.Tries) tried at its take
	met    []confChoice   // the last confSearchKeep takes with readings left (a ring)
	metN   int            // takes put in met
	mover  []int32        // by task id - 1: 1 + the event index of the last batch steal that moved it (0: none)
	work   int            // events replayed so far
	runs   int            // replays so far
	// The bounds (confSearchEvents, confSearchRuns, confSearchWork; the
	// tests lower them).
	maxEvents, maxRuns, maxWork int

	child    bool // a replay: it keeps no events and searches nothing
	inCheck  bool // check runs the rules (searchCheck called it; always, in a replay)
	watch    int  // in a replay: the event whose take is followed
	watchPos int  // the position its take was accepted at; -1: it was not
}

func newConfSearch() *confSearch {
	return &confSearch{maxEvents: confSearchEvents, maxRuns: confSearchRuns, maxWork: confSearchWork}
}

// confKept is an event as the search keeps it for its replays: every
// field but Detail (kept apart, for the few events that have one), and no
// pointer, so that the garbage collector never scans the events kept.
type confKept struct {
	seq, call, ret         uint64
	task, future, time     int64
	worker, victim, prio   int32
	queue                  traces.Queue
	kind                   traces.Kind
	source                 traces.Source
	result                 traces.Result
	outcome                traces.Outcome
	rule                   model.Rule
	reason                 traces.StopReason
	prioritized, hasDetail bool
}

// confKeptChunk is how many events one chunk of confSearch.events holds:
// the events kept are never copied as they grow.
const confKeptChunk = 1 << 13

// keep keeps event e, the next, for the replays.
func (sr *confSearch) keep(e *traces.Event) {
	if sr.nkept%confKeptChunk == 0 {
		sr.events = append(sr.events, make([]confKept, 0, confKeptChunk))
	}
	k := confKept{seq: e.Seq, call: e.Call, ret: e.Return, task: e.Task, future: e.Future, time: e.Time,
		worker: e.Worker, victim: e.Victim, prio: e.Priority, queue: e.Queue, kind: e.Kind, source: e.Source,
		result: e.Result, outcome: e.Outcome, rule: e.Rule, reason: e.Reason, prioritized: e.Prioritized, hasDetail: e.Detail != ""}
	if k.hasDetail {
		if sr.detail == nil {
			sr.detail = map[int]string{}
		}
		sr.detail[sr.nkept] = e.Detail
	}
	last := &sr.events[len(sr.events)-1]
	*last = append(*last, k)
	sr.nkept++
}

// kept returns event i, as keep kept it.
func (sr *confSearch) kept(i int) traces.Event {
	k := &sr.events[i/confKeptChunk][i%confKeptChunk]
	e := traces.Event{Seq: k.seq, Call: k.call, Return: k.ret, Task: k.task, Future: k.future, Time: k.time,
		Worker: k.worker, Victim: k.victim, Priority: k.prio, Queue: k.queue, Kind: k.kind, Source: k.source,
		Result: k.result, Outcome: k.outcome, Rule: k.rule, Reason: k.reason, Prioritized: k.prioritized}
	if k.hasDetail {
		e.Detail = sr.detail[i]
	}
	return e
}

// confChoice is a take (event idx, interval [call, ret]) accepted at
// reading pos of interval.Tries, whose last reading is last.
type confChoice struct {
	idx, pos, last int
	call, ret      uint64
}

// The search's bounds (see confSearch).
const (
	confSearchEvents = 1 << 19
	confSearchNear   = 48
	confSearchKeep   = 1024
	confSearchPairs  = 10
	confSearchRuns   = 400
	confSearchWork   = 1 << 26
)

// errSkipped fails the reading at Seq of a take the search reads
// otherwise (a replay's message; never reported).
var errSkipped = fmt.Errorf("the take at its Seq is a reading the search skips")

// note records that the take e (event idx) was accepted at reading pos,
// of the readings up to last.
func (sr *confSearch) note(idx int, e *traces.Event, pos, last int) {
	if sr.child && idx == sr.watch {
		sr.watchPos = pos
	}
	if pos >= last {
		return // no reading left after it
	}
	ch := confChoice{idx, pos, last, e.Call, e.Return}
	if len(sr.met) < confSearchKeep {
		sr.met = append(sr.met, ch)
	} else {
		sr.met[sr.metN%confSearchKeep] = ch
	}
	sr.metN++
}

// moved notes that the batch steal of event idx moved the tasks ts.
func (sr *confSearch) moved(idx int, ts []int32) {
	for _, t := range ts {
		if t <= 0 {
			continue
		}
		for len(sr.mover) < int(t) {
			sr.mover = append(sr.mover, 0)
		}
		sr.mover[t-1] = int32(idx + 1)
	}
}

// near returns the takes whose readings the search tries, first to last:
// of the last confSearchKeep, the batch steals that last moved one of the
// tasks ts, then those whose interval overlaps one of ivs, nearest
// first, then the others, confSearchNear in all.
func (sr *confSearch) near(ts []int64, ivs ...[2]uint64) []confChoice {
	var movers, over, rest []confChoice
	for i := range len(sr.met) {
		ch := sr.met[(sr.metN-1-i)%len(sr.met)]
		switch {
		case slices.ContainsFunc(ts, func(t int64) bool { return t > 0 && int(t) <= len(sr.mover) && int(sr.mover[t-1]) == ch.idx+1 }):
			movers = append(movers, ch)
		case slices.ContainsFunc(ivs, func(iv [2]uint64) bool { return ch.call <= iv[1] && iv[0] <= ch.ret }):
			over = append(over, ch)
		case len(rest) < confSearchNear:
			rest = append(rest, ch)
		}
	}
	all := slices.Concat(movers, over, rest)
	return all[:min(len(all), confSearchNear)]
}

// searchCheck is check with the search: it keeps e for the replays, and
// when e fails as a take, searches the readings of the takes before it.
func (c *Conformance) searchCheck(idx int, e *traces.Event) error {
	sr := c.sr
	if !sr.over {
		if sr.nkept == sr.maxEvents {
			sr.events, sr.detail, sr.over = nil, nil, true
		} else {
			sr.keep(e)
		}
	}
	sr.inCheck = true
	err := c.check(idx, e)
	sr.inCheck = false
	if err == nil || !c.searchable() {
		return err
	}
	r := c.search(func(dev map[int]int, watch int) *Conformance {
		r := c.replay(dev, watch, idx)
		if r != nil && r.fr.Err == nil {
			r.fr.N = idx + 1 // as Step numbers it
			r.check(idx, e)
		}
		return r
	}, idx+1, e.Task, [2]uint64{e.Call, e.Return}, [2]uint64{c.fr.Err.Event.Call, c.fr.Err.Event.Return})
	if r == nil {
		return c.fr.Err
	}
	c.adopt(r)
	return nil
}

// searchReport fills in what the search did.
func (c *Conformance) searchReport(r *Report) {
	if c.sr != nil {
		r.Reread, r.Replays = len(c.sr.dev), c.sr.runs
	}
}

// searchFinish searches, when the end of the trace failed a take (an
// obligation, a claim), the readings that make it hold.
func (c *Conformance) searchFinish() {
	if c.sr.child || !c.searchable() {
		return
	}
	n := c.fr.N
	if r := c.search(func(dev map[int]int, watch int) *Conformance {
		r := c.replay(dev, watch, n)
		if r != nil && r.fr.Err == nil {
			r.finishChecks()
		}
		return r
	}, n, 0, [2]uint64{c.fr.Err.Event.Call, c.fr.Err.Event.Return}); r != nil {
		c.adopt(r)
	}
}

// searchable reports whether the violation found is one a reading of the
// batch steals may explain: a take's, within the checker's limits. Past
// the events kept, it marks the violation a limit (no verdict).
func (c *Conformance) searchable() bool {
	if c.fr.Err == nil || c.fr.Err.Limit != "" {
		return false
	}
	switch c.fr.Err.Rule {
	case model.POLL_LOCAL, model.GLOBAL_STEAL, model.WORKER_STEAL:
	default:
		return false
	}
	if c.sr.over {
		c.searchSpent(fmt.Sprintf("the search over readings of batch steals keeps %d events, and the trace is longer", c.sr.maxEvents))
		return false
	}
	return true
}

// searchSpent marks the violation found a limit of the checker: the search
// could not try every reading it was to try.
func (c *Conformance) searchSpent(why string) {
	c.fr.Err.Limit = why
	c.fr.Err.Msg += "; no other reading of the batch steals was found to conform, but " + why + ": no verdict"
}

// search tries the readings (see confSearch) of the takes self, then of
// the takes met before, with run, which replays the trace with the takes
// of dev read from the positions it gives, following the take of event
// watch, up to the failed event (cost: events replayed). It returns the
// first replay that conforms, or nil (the violation then stands, or is a
// limit when a budget was spent).
func (c *Conformance) search(run func(dev map[int]int, watch int) *Conformance, cost int, ts int64, ivs ...[2]uint64) *Conformance {
	sr := c.sr
	near := sr.near([]int64{c.fr.Err.Event.Task, ts}, ivs...)
	runs := 0
	spent := func() bool {
		if runs < sr.maxRuns && sr.work+cost <= sr.maxWork {
			return false
		}
		c.searchSpent(fmt.Sprintf("the search spent its budget (%d replays for one failure, %d replayed events in all) with readings still to try", sr.maxRuns, sr.maxWork))
		return true
	}
	replay := func(dev map[int]int, watch int) *Conformance {
		runs++
		sr.runs++
		sr.work += cost
		return run(dev, watch)
	}
	with := func(base map[int]int, idx, pos int) map[int]int {
		dev := maps.Clone(base)
		if dev == nil {
			dev = map[int]int{}
		}
		dev[idx] = pos
		return dev
	}
	// One take read otherwise: each of its readings after the one kept.
	for _, ch := range near {
		for p := ch.pos + 1; p <= ch.last; {
			if spent() {
				return nil
			}
			r := replay(with(sr.dev, ch.idx, p), ch.idx)
			if r == nil {
				return nil
			}
			if r.fr.Err == nil {
				return r
			}
			if r.sr.watchPos < 0 {
				break // no reading from p on
			}
			p = r.sr.watchPos + 1
		}
	}
	// Two of the nearest at once, each at its next reading.
	pairs := near[:min(len(near), confSearchPairs)]
	for i, a := range pairs {
		for _, b := range pairs[i+1:] {
			if spent() {
				return nil
			}
			if r := replay(with(with(sr.dev, a.idx, a.pos+1), b.idx, b.pos+1), -1); r != nil && r.fr.Err == nil {
				return r
			}
		}
	}
	return nil
}

// replay checks the first n events again from the start, the takes of dev
// read from the positions it gives, following the take of event watch;
// nil if the header is refused (it was accepted once).
func (c *Conformance) replay(dev map[int]int, watch, n int) *Conformance {
	r, err := New(c.h)
	if err != nil { // the header was accepted once: not reached
		return nil
	}
	r.sr = &confSearch{child: true, inCheck: true, dev: dev, watch: watch, watchPos: -1}
	if c.invEvery >= 1<<30 {
		r.SkipInvariants()
	}
	for i := range n {
		e := c.sr.kept(i)
		if r.step(&e) != nil {
			break
		}
	}
	return r
}

// adopt takes over the state of replay r, which conforms where c failed.
func (c *Conformance) adopt(r *Conformance) {
	sr := c.sr
	sr.dev, sr.met, sr.metN, sr.mover = r.sr.dev, r.sr.met, r.sr.metN, r.sr.mover
	*c = *r
	c.sr = sr
	if c.iv != nil {
		c.iv.SetHost(ivHost{c}) // the reader read for r
	}
}
