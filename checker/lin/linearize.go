package lin

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// Options configures a linearizability check. The zero value works: a
// ten-second budget, windows of at most DefaultMaxWindow operations, the
// whole-executor specification only for histories of at most
// DefaultMaxWhole operations, and no HTML file.
type Options struct {
	// Budget is the time the whole check may take. When it is spent, the
	// parts not yet decided are Unknown, never Holds. Zero means 10s.
	Budget time.Duration
	// MaxWindow bounds the operations of a queue window searched with the
	// others under the whole budget (strict-FIFO histories are checked in
	// exponential time). A longer window is searched on its own, with at
	// most LongBudget, and is Unknown if that search does not end. Zero
	// means DefaultMaxWindow; negative means no bound.
	MaxWindow int
	// LongBudget is the time one window longer than MaxWindow may take.
	// Zero means DefaultLongBudget; negative means such windows are not
	// searched at all (Unknown).
	LongBudget time.Duration
	// MaxWhole is the largest history, in operations, checked against the
	// whole-executor specification. Zero means DefaultMaxWhole; negative
	// turns that specification off.
	MaxWhole int
	// Complete says the run finished (the executor was closed after every
	// task was DONE): every queue must then end empty and every spawned
	// task DONE, so that lost elements are caught. Leave it false for a run
	// that was cut.
	Complete bool
	// OwnerFIFO makes a worker take from the head of its own deque (the
	// steal end) instead of the tail. Check also reads the
	// trace header's "owner-lifo" setting (0 means FIFO).
	OwnerFIFO bool
	// HTML, when not empty, is where porcupine's visualization of the
	// first violated specification is written: its failing parts (a queue
	// window with the windows just before it), one row per client (row 0
	// is outside any worker, row w+1 is worker w), and rows of annotations
	// for steals, parks and wakes. Nothing is written when nothing is
	// violated.
	HTML string
	// MaxEvents is the longest trace checked, in events: the history costs
	// memory in proportion to the trace (measured: 300 to 1,300 bytes per
	// event at the peak, the more the longer each task's history), so a
	// longer trace gets an Unknown verdict that names the limit instead of
	// an unbounded allocation. Zero means DefaultMaxEvents; negative
	// means no bound.
	MaxEvents int
	// Inputs are files the HTML file must never replace (the trace):
	// the HTML is written through traces.CreateOutput, which also never
	// follows a symbolic link.
	Inputs []string
}

// Defaults of Options, chosen from measurements (see the benchmarks).
const (
	DefaultBudget     = 10 * time.Second
	DefaultMaxWindow  = 200
	DefaultLongBudget = time.Second
	DefaultMaxWhole   = 64
	// WholeBudget is the most the whole-executor search may take of the
	// budget; past it that specification is Unknown.
	WholeBudget = 2 * time.Second
	// DefaultMaxEvents is the default of Options.MaxEvents.
	DefaultMaxEvents = 1 << 19
)

func (o Options) maxEvents() int { return limitOr(o.MaxEvents, DefaultMaxEvents) }

// TooLong is the result of a linearizability check of a trace of n
// events, more than limit: Unknown, naming the limit. A caller that reads a
// trace as a stream uses it to stop keeping events once the limit is
// passed.
func TooLong(n, limit int) Result {
	return Result{Verdict: checker.Unknown, Checks: []SpecCheck{{
		Spec: "history", Verdict: checker.Unknown,
		Detail: fmt.Sprintf("not checked: the trace has %d events, more than the limit of %d events of the linearizability check (its memory grows with the trace)", n, limit),
	}}}
}

func (o Options) budget() time.Duration {
	if o.Budget <= 0 {
		return DefaultBudget
	}
	return o.Budget
}

func (o Options) maxWindow() int { return limitOr(o.MaxWindow, DefaultMaxWindow) }

func (o Options) longBudget() time.Duration { return cmp.Or(o.LongBudget, DefaultLongBudget) }

func (o Options) maxWhole() int { return cmp.Or(o.MaxWhole, DefaultMaxWhole) }

// limitOr is the limit an option v sets: def where v is 0, none (the
// largest int) where v is negative.
func limitOr(v, def int) int {
	if v < 0 {
		return math.MaxInt
	}
	return cmp.Or(v, def)
}

// SpecCheck is the outcome of one sequential specification against its part
// of a history: one partition per task, per window of a queue, or the whole
// history. A value: the zero SpecCheck is an Unknown verdict on nothing; safe
// to copy and to read from several goroutines.
type SpecCheck struct {
	Spec       string          // "task", "global", "local[w]", "executor", or a caller's name
	Verdict    checker.Verdict // Holds, Violated, or Unknown (budget spent or window too long)
	Ops        int             // operations checked
	Partitions int             // independent parts (tasks, windows)
	Skipped    int             // long parts not searched (no budget left, or LongBudget < 0)
	Detail     string          // what failed, or why the verdict is Unknown
	HTML       string          // the visualization written for a violation, if any
	HTMLError  string          // why the visualization was not written, if it was asked for and not written
	Elapsed    time.Duration   // time spent
	failing    [][]porcupine.Operation
	model      porcupine.Model
}

// Result is the outcome of Check: one SpecCheck per
// specification, and the verdict over them (Violated if any is violated;
// else Unknown if any is unknown; else Holds). The zero Result is
// Unknown. A value, safe to copy.
type Result struct {
	Verdict checker.Verdict
	Checks  []SpecCheck
	Ops     int    // operations taken from the trace
	HTML    string // the visualization written for the first violation, if any
	// HTMLError says why the visualization was asked for and not written
	// (a file that cannot be created, a re-check out of time). The verdict
	// stands either way.
	HTMLError string
	Elapsed   time.Duration
}

// Summary is a few lines a person reads: the verdict and each check.
func (r Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "linearizability: %s (%d operations, %v)\n", r.Verdict, r.Ops, r.Elapsed.Round(time.Millisecond))
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  %-10s %-8s %6d ops %5d parts", c.Spec, c.Verdict, c.Ops, c.Partitions)
		if c.Skipped > 0 {
			fmt.Fprintf(&b, " (%d not searched)", c.Skipped)
		}
		if c.Detail != "" {
			fmt.Fprintf(&b, ": %s", c.Detail)
		}
		b.WriteByte('\n')
	}
	if r.HTML != "" {
		fmt.Fprintf(&b, "visualization: %s\n", r.HTML)
	}
	if r.HTMLError != "" {
		fmt.Fprintf(&b, "visualization not written: %s\n", r.HTMLError)
	}
	return b.String()
}

func combineVerdicts(checks []SpecCheck) checker.Verdict {
	v := checker.Holds
	for _, c := range checks {
		switch c.Verdict {
		case checker.Violated:
			return checker.Violated
		case checker.Unknown:
			v = checker.Unknown
		}
	}
	return v
}

// linRun checks parts against model within the deadline.
//
// Each part is first replayed in the order of its events' sequence numbers
// (linWitness): when that order is a legal run, the part holds at once.
// decide, when not nil, is tried next: a polynomial decision that returns
// Unknown when it does not apply. The other parts of at most
// maxPart operations are searched together (in parallel, by porcupine);
// each longer one is then searched on its own with at most longBudget (not
// at all if longBudget < 0), and is Unknown if its search does not end. On
// a violation the failing parts (at most a few) are kept for the
// visualization; describe names a part for the detail.
func linRun(spec string, model porcupine.Model, parts [][]porcupine.Operation, maxPart int, longBudget time.Duration, deadline time.Time, describe func(i int) string, decide func([]porcupine.Operation) (checker.Verdict, string)) SpecCheck {
	start := time.Now()
	c := SpecCheck{Spec: spec, Partitions: len(parts), model: model}
	one := model
	one.Partition = nil
	var failing []int // parts found violated
	var why []string  // and what the decision said
	var search [][]porcupine.Operation
	var searchIdx, long []int
	late := 0 // parts not looked at: the budget ran out first
	for i, p := range parts {
		c.Ops += len(p)
		if i%64 == 0 && time.Now().After(deadline) {
			late = len(parts) - i
			for _, q := range parts[i+1:] {
				c.Ops += len(q)
			}
			break
		}
		if linWitness(model, p) {
			continue
		}
		if decide != nil && len(failing) < 3 {
			switch v, d := decide(p); v {
			case checker.Holds:
				continue
			case checker.Violated:
				failing = append(failing, i)
				why = append(why, describe(i)+": "+d)
				continue
			}
		}
		if len(p) > maxPart {
			long = append(long, i)
			continue
		}
		search = append(search, p)
		searchIdx = append(searchIdx, i)
	}
	unknown := ""
	if len(failing) == 0 && len(search) > 0 {
		if time.Until(deadline) <= 0 {
			c.Verdict = checker.Unknown
			c.Detail = "time budget spent before this check"
			c.Elapsed = time.Since(start)
			return c
		}
		m := model
		m.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return search }
		// porcupine wants one history; the partition function above ignores it.
		switch porcupine.CheckOperationsTimeout(m, nil, time.Until(deadline)) {
		case porcupine.Unknown:
			unknown = "time budget spent during the search"
		case porcupine.Illegal:
			// Find the failing parts, one by one, so that the detail
			// names them and the visualization shows only them.
			for k, p := range search {
				if len(failing) >= 3 || time.Until(deadline) <= 0 {
					break
				}
				if porcupine.CheckOperationsTimeout(one, p, time.Until(deadline)) == porcupine.Illegal {
					failing = append(failing, searchIdx[k])
					why = append(why, describe(searchIdx[k]))
				}
			}
			if len(failing) == 0 {
				why = append(why, "some part (the budget ran out while finding which)")
				failing = append(failing, -1)
			}
		}
	}
	undecided := 0
	for _, i := range long {
		left := min(longBudget, time.Until(deadline))
		if longBudget < 0 || left <= 0 || len(failing) > 0 {
			c.Skipped++
			undecided++
			continue
		}
		switch porcupine.CheckOperationsTimeout(one, parts[i], left) {
		case porcupine.Illegal:
			failing = append(failing, i)
			why = append(why, describe(i))
		case porcupine.Unknown:
			undecided++
		}
	}
	switch {
	case len(failing) > 0:
		c.Verdict = checker.Violated
		for _, i := range failing {
			if i >= 0 && len(parts[i]) <= max(maxPart, DefaultMaxWindow) {
				c.failing = append(c.failing, linContext(parts, i))
			}
		}
		c.Detail = "no linearization of " + strings.Join(why, "; ")
	case unknown != "":
		c.Verdict, c.Detail = checker.Unknown, unknown
	case late > 0:
		c.Verdict = checker.Unknown
		c.Skipped += late
		c.Detail = fmt.Sprintf("time budget spent: %d of %d parts not checked", late, len(parts))
	case undecided > 0:
		c.Verdict = checker.Unknown
		c.Detail = fmt.Sprintf("%d part(s) longer than %d operations undecided within their budget", undecided, maxPart)
	default:
		c.Verdict = checker.Holds
	}
	c.Elapsed = time.Since(start)
	return c
}

// writeLinHTML writes porcupine's visualization of c's failing parts to
// path, with annotations.
func writeLinHTML(c SpecCheck, path string, notes []linNote, budget time.Duration, inputs []string) error {
	if len(c.failing) == 0 {
		return errors.New("no failing part to show")
	}
	m := c.model
	parts := c.failing
	m.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	res, info := porcupine.CheckOperationsVerbose(m, nil, budget)
	if res != porcupine.Illegal {
		return fmt.Errorf("re-check of the failing parts gave %s", res)
	}
	// Keep the notes inside the shown time range, and of those about
	// tasks, the ones about the tasks shown.
	lo, hi := int64(linInf), int64(0)
	shown := map[int64]bool{}
	for _, p := range parts {
		for _, op := range p {
			lo = min(lo, op.Call)
			if op.Return < linInf {
				hi = max(hi, op.Return)
			}
			hi = max(hi, op.Call)
			switch in := op.Input.(type) {
			case *linTaskIn:
				shown[in.task] = true
			case linQueueIn:
				shown[in.value] = true
				for _, v := range append(in.load, in.moved...) {
					shown[v] = true
				}
			case linWholeIn:
				shown[in.op.task] = true
			}
		}
	}
	var keep []porcupine.Annotation
	for _, n := range notes {
		if n.Start >= lo && n.Start <= hi && (n.task == 0 || shown[n.task]) {
			keep = append(keep, n.Annotation)
		}
	}
	sort.SliceStable(keep, func(i, j int) bool { return keep[i].Start < keep[j].Start })
	if len(keep) > 500 {
		keep = keep[:500]
	}
	info.AddAnnotations(keep)
	err := traces.WriteOutput(path, func(o *traces.OutputFile) error { return porcupine.Visualize(m, info, o) }, inputs...)
	if err != nil {
		return fmt.Errorf("writing linearizability visualization: %w", err)
	}
	return nil
}

// Check checks the history that an executor recorded (the
// queue operations and lifecycle steps of its trace, as intervals on the
// trace's logical clock) against the sequential specifications of the
// model:
//
//   - "task": each task's lifecycle, one partition per task (SPAWN, the
//     takes, poll begin and end, TASK-SUSPEND with its re-queue, WAKE with
//     its outcome);
//   - "global": the global queue, FIFO, in windows (see CheckQueue);
//   - "local[w]": worker w's deque, owner end and steal end;
//   - "executor": all of it at once, for histories of at most
//     opt.MaxWhole operations (skipped, and so not part of the verdict,
//     beyond).
//
// Vocabulary. An operation is one event (or a poll end with its re-queue)
// as an interval [Call, Return] on the trace's logical clock; events
// without Call/Return ticks are instants at their Seq. An operation that
// never returned (Return 0) is kept and may take effect anywhere after its
// call. A worker is one goroutine, so its operations are ordered by their
// Seq even when their recorded intervals overlap. A window is a stretch of
// one queue's history that starts at a determined quiescent point (see
// CheckQueue) and is checked on its own.
//
// What the trace's header changes: "owner-lifo" 0 makes owners take from
// the head; "lifo-slot" gives each local queue a one-task slot that spawns
// and wakes fill when it is empty and POLL-LOCAL through the slot empties;
// "steal-half" lets a steal move more tasks, which are inferred from where
// they are taken later (up to two hops); the "priority" policy checks the global
// queue as a bag, since the trace does not carry priorities; "timeslice"
// and "retry" follow the model's re-poll and re-run rules; "spurious-polls"
// 1 and "slice-us" (format v1.1) leave the tasks and the whole executor
// unchecked (Unknown, saying why): the task model has neither.
//
// Bad events (no clock, an unknown kind, a task id below 1) are an error
// naming the event; nothing is checked then.
//
// Cost: linear in the trace outside the searches; each search is bounded by
// opt.Budget, after which the verdict is Unknown. Safe for concurrent use.
func Check(h traces.Header, events []traces.Event, opt Options) (Result, error) {
	start := time.Now()
	deadline := start.Add(opt.budget())
	if limit := opt.maxEvents(); len(events) > limit {
		return TooLong(len(events), limit), nil
	}
	hist, err := linBuildHistory(h, events, opt.OwnerFIFO, opt.Complete)
	if err != nil {
		return Result{Verdict: checker.Unknown}, fmt.Errorf("linearizability: %w", err)
	}
	res := Result{Ops: len(hist.ops)}

	// Per task.
	count := map[int64]int{}
	for _, o := range hist.ops {
		count[o.task.task]++
	}
	byTask := make(map[int64][]porcupine.Operation, len(count))
	taskOrder := make([]int64, 0, len(count))
	for t, n := range count {
		taskOrder = append(taskOrder, t)
		byTask[t] = make([]porcupine.Operation, 0, n+1)
	}
	for k := range hist.ops {
		// Inputs are pointers into hist.ops: boxing a pointer allocates
		// nothing, boxing the value would, once per operation.
		o := &hist.ops[k]
		t := o.task.task
		byTask[t] = append(byTask[t], porcupine.Operation{
			ClientId: o.client, Input: &o.task, Call: o.call, Return: o.ret, Metadata: o.event,
		})
	}
	sort.Slice(taskOrder, func(i, j int) bool { return taskOrder[i] < taskOrder[j] })
	parts := make([][]porcupine.Operation, len(taskOrder))
	for i, t := range taskOrder {
		p := byTask[t]
		if opt.Complete {
			p = append(p, porcupine.Operation{
				Input: &linTaskIn{kind: linEnd, task: t}, Call: hist.maxTick + 1, Return: linInf, Metadata: -1,
			})
		}
		parts[i] = p
	}
	// The task model has neither spurious polls nor time-based slices: a
	// trace whose header allows them is not checked task by task (nor as a
	// whole), rather than flagged; its queues are.
	unmodelled := ""
	switch {
	case h.Config["spurious-polls"] == 1:
		unmodelled = "the header allows spurious polls (spurious-polls 1), which the task model of this check does not have"
	case h.Config["slice-us"] > 0:
		unmodelled = "the header's slices are timed (slice-us), which the task model of this check does not have"
	}
	if unmodelled != "" {
		res.Checks = append(res.Checks, SpecCheck{Spec: "task", Verdict: checker.Unknown, Partitions: len(parts), Detail: "not checked: " + unmodelled})
	} else {
		res.Checks = append(res.Checks, linRun("task", linTaskModel(hist.pol), parts, int(^uint(0)>>1), 0, deadline, func(i int) string {
			return fmt.Sprintf("task %d", taskOrder[i])
		}, nil))
	}

	// Per queue: global first, then the local deques in worker order.
	var qs []traces.Queue
	for q := range hist.queues {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i] < qs[j] })
	for _, q := range qs {
		name := "global"
		if q != traces.QueueGlobal {
			name = fmt.Sprintf("local[%d]", q.Worker())
		}
		ws, err := linQueueWindows(hist.queues[q], opt.Complete)
		if err != nil {
			return Result{Verdict: checker.Unknown}, fmt.Errorf("linearizability: %s: %w", name, err)
		}
		parts := make([][]porcupine.Operation, len(ws))
		for i, w := range ws {
			parts[i] = w.ops
		}
		res.Checks = append(res.Checks, linRun(name, linQueueModel(name), parts, opt.maxWindow(), opt.longBudget(), deadline, func(i int) string {
			return describeWindow(name, parts[i])
		}, linFIFODecide))
	}

	// The whole executor, on small histories.
	if mw := opt.maxWhole(); mw > 0 && len(hist.ops) <= mw && unmodelled == "" {
		ops, nt, nq := linWholeOps(hist, opt.Complete)
		res.Checks = append(res.Checks, linRun("executor", linWholeModel(hist.pol, nt, nq), [][]porcupine.Operation{ops}, int(^uint(0)>>1), 0, linEarlier(deadline, time.Now().Add(WholeBudget)), func(int) string {
			return "the whole history"
		}, nil))
	}

	res.Verdict = combineVerdicts(res.Checks)
	if res.Verdict == checker.Violated && opt.HTML != "" {
		res.HTMLError = "no violated part small enough to show"
		for i, c := range res.Checks {
			if c.Verdict != checker.Violated || len(c.failing) == 0 {
				continue
			}
			res.HTMLError = ""
			if err := writeLinHTML(c, opt.HTML, hist.notes, max(time.Until(deadline), time.Second), opt.Inputs); err != nil {
				res.HTMLError = err.Error()
				res.Checks[i].HTMLError = res.HTMLError
				break
			}
			res.Checks[i].HTML = opt.HTML
			res.HTML = opt.HTML
			break
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func linEarlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// linContext is part i with, for a queue window, the windows just before it
// (up to 60 operations in all), so that the visualization shows how the
// queue came to hold what the failing window starts from. Windows joined
// end to end are checked exactly as they were apart: each later window's
// load is dropped, its content being what the earlier ones leave.
func linContext(parts [][]porcupine.Operation, i int) []porcupine.Operation {
	isLoad := func(op porcupine.Operation) bool {
		in, ok := op.Input.(linQueueIn)
		return ok && in.load != nil
	}
	isEnd := func(op porcupine.Operation) bool {
		in, ok := op.Input.(linQueueIn)
		return ok && in.end
	}
	if len(parts[i]) == 0 || !isLoad(parts[i][0]) {
		return parts[i]
	}
	j, n := i, len(parts[i])
	for j > 0 && n+len(parts[j-1]) <= 60 && len(parts[j-1]) > 0 && !isEnd(parts[j-1][len(parts[j-1])-1]) {
		j--
		n += len(parts[j])
		if len(parts[j]) > 0 && !isLoad(parts[j][0]) {
			break // an empty queue before it: far enough
		}
	}
	out := make([]porcupine.Operation, 0, n)
	for k := j; k <= i; k++ {
		for m, op := range parts[k] {
			if m == 0 && k > j && isLoad(op) {
				continue
			}
			out = append(out, op)
		}
	}
	return out
}

// linPoint returns where an operation took effect by the trace's own
// account: twice its event's Seq (ticks are doubled), or, for the synthetic
// load and end operations, their call. ok is false when the operation has
// no Seq.
func linPoint(op porcupine.Operation) (int64, bool) {
	var seq uint64
	switch in := op.Input.(type) {
	case *linTaskIn:
		if in.kind == linEnd {
			return op.Call, true
		}
		seq = in.seq
	case linQueueIn:
		if in.load != nil || in.end {
			return op.Call, true
		}
		seq = in.seq
	case linWholeIn:
		if in.op.kind == linEnd {
			return op.Call, true
		}
		seq = in.op.seq
	}
	if seq == 0 || seq >= 1<<61 {
		return 0, false
	}
	return 2 * int64(seq), true
}

// linWitness reports whether replaying part in the order of its events'
// Seq is a legal run of model, each operation taking effect at its Seq
// inside its [Call, Return]. That order then respects real time, so it is a
// linearization, and the part holds without a search. Executors draw Seq
// where the operation takes effect, so for a correct executor the first
// order tried is the answer; when it is not, porcupine searches the others.
// Cost: O(n log n) and one model step per operation.
func linWitness(model porcupine.Model, part []porcupine.Operation) bool {
	type pt struct {
		at int64
		k  int
	}
	pts := make([]pt, len(part))
	for k, op := range part {
		at, ok := linPoint(op)
		if !ok || at < op.Call || at > op.Return {
			return false
		}
		pts[k] = pt{at, k}
	}
	sort.Slice(pts, func(a, b int) bool {
		if pts[a].at != pts[b].at {
			return pts[a].at < pts[b].at
		}
		return pts[a].k < pts[b].k
	})
	st := model.Init()
	for _, p := range pts {
		ok, next := model.Step(st, part[p.k].Input, part[p.k].Output)
		if !ok {
			return false
		}
		st = next
	}
	return true
}
