package gotrace

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Options steer Check. The zero value works.
type Options struct {
	// StuckAfter: a goroutine that is runnable at the end of the trace and
	// has waited at least this long since it became runnable without being
	// run is a finding (starved, or a lost run). Shorter waits are listed
	// but are not findings: the trace may simply have stopped just after a
	// wake. Zero means one second.
	StuckAfter time.Duration
	// Worst is how many worst cases the report names; zero means 5.
	Worst int
	// MaxViolations bounds the lifecycle violations kept; zero means 20.
	MaxViolations int
}

// Report is what a Go runtime trace shows about the scheduler that
// ran it: lifecycle conformance, goroutines left runnable, and the fairness
// figures. Verdict is Holds or Violated; a Go trace is checked whole, so
// there is no budget and no Unknown.
type Report struct {
	Events     int
	Goroutines int // goroutines seen (created during the trace, or present before it)
	Verdict    checker.Verdict
	// Violations are the lifecycle violations, in trace order: a goroutine
	// run on two Ps at once, a P running two goroutines at once, a run
	// after exit or without a wake, a wake of a goroutine that is not
	// blocked, a poll-end of one that is not running, and goroutines stuck
	// runnable (see StuckAfter).
	Violations []Violation
	// LeftRunnable are the goroutines runnable at the end of the trace that
	// never ran after becoming runnable, longest wait first.
	LeftRunnable []Runnable
	// Delays holds, per goroutine that was run after becoming runnable, the
	// figures of its waits between becoming runnable (creation or wake) and
	// running, ordered by goroutine id.
	Delays []Delay
	// WorstByTime and WorstByRuns are the goroutines with the longest wait,
	// in trace time and in runs of other goroutines in between.
	WorstByTime, WorstByRuns []Delay
	MaxDelay                 time.Duration
	MaxOtherRuns             int
	// CannotShow lists the rules and facts a Go trace cannot show.
	CannotShow []string
	// NoProc counts transitions the reader left out for lack of a P.
	NoProc int
}

// Violation is one lifecycle violation.
type Violation struct {
	Index     int // into the GoTrace's Events, from 0 (Msg counts from 1); -1 for an end-of-trace finding
	Event     traces.Event
	Goroutine int64
	Msg       string
}

// Runnable is a goroutine runnable at the end of the trace.
type Runnable struct {
	Goroutine int64
	Waited    time.Duration // from becoming runnable to the end of the trace
	Stuck     bool          // Waited ≥ StuckAfter: a finding
	Where     string        // where it had blocked before its wake, or its start
}

// Delay is one goroutine's waits between becoming runnable and running.
type Delay struct {
	Goroutine    int64
	Waits        int           // how many waits were measured
	MaxDelay     time.Duration // the longest, in trace time
	MeanDelay    time.Duration
	MaxOtherRuns int    // the most runs of other goroutines during one wait
	Where        string // where it had blocked before its longest wait (its start, for a wait after creation)
	Start        string // its starting function, when known
}

type goState struct {
	state     model.TaskState
	p         int32
	readyAt   int64 // ns
	readyRuns int   // total runs when it became runnable
	where     string
	whereWait string // where, as of its longest wait
	delay     Delay
	sum       time.Duration
}

// Check checks a Go runtime trace read by traces.ReadGoTrace. It
// runs in time linear in the events and memory linear in the goroutines.
func Check(gt *traces.GoTrace, opt Options) *Report {
	if opt.StuckAfter <= 0 {
		opt.StuckAfter = time.Second
	}
	if opt.Worst <= 0 {
		opt.Worst = 5
	}
	if opt.MaxViolations <= 0 {
		opt.MaxViolations = 20
	}
	rep := &Report{Events: len(gt.Events), Verdict: checker.Holds, CannotShow: traces.GoTraceCannotShow, NoProc: gt.NoProc}
	gs := map[int64]*goState{}
	get := func(g int64) *goState {
		s, ok := gs[g]
		if !ok {
			s = &goState{p: -1}
			s.delay.Goroutine = g
			if st, ok := gt.Initial[g]; ok {
				s.state = st
			}
			s.where = gt.Start[g]
			s.delay.Start = gt.Start[g]
			gs[g] = s
		}
		return s
	}
	for g := range gt.Initial {
		get(g)
	}
	onP := map[int32]int64{} // P → the goroutine running on it
	runs := 0
	violate := func(i int, e traces.Event, format string, args ...any) {
		rep.Verdict = checker.Violated
		if len(rep.Violations) < opt.MaxViolations {
			rep.Violations = append(rep.Violations, Violation{Index: i, Event: e, Goroutine: e.Task, Msg: fmt.Sprintf("event %d (%s): ", i+1, traces.FormatEvent(e)) + fmt.Sprintf(format, args...)})
		}
	}
	var end int64
	for i, e := range gt.Events {
		now := int64(0)
		if i < len(gt.Times) {
			now = gt.Times[i]
		}
		end = max(end, now)
		if e.Task == 0 {
			continue // park, unpark: about a P, not a goroutine
		}
		s := get(e.Task)
		g := e.Task
		switch e.Kind {
		case traces.KindSpawn:
			if s.state != model.Idle {
				violate(i, e, "goroutine %d created again, while %v", g, s.state)
			}
			s.state, s.readyAt, s.readyRuns = model.Queued, now, runs
			if e.Detail != "" {
				s.where = e.Detail
			}
		case traces.KindTake:
			switch s.state {
			case model.Idle:
				violate(i, e, "goroutine %d runs but was never created", g)
			case model.Done:
				violate(i, e, "goroutine %d runs after it exited", g)
			case model.Running:
				violate(i, e, "goroutine %d runs on P %d while it is running on P %d", g, e.Worker, s.p)
			case model.Waiting:
				violate(i, e, "goroutine %d runs while blocked, without a wake", g)
			case model.Queued:
				d := time.Duration(now - s.readyAt)
				other := runs - s.readyRuns
				s.delay.Waits++
				s.sum += d
				if d >= s.delay.MaxDelay {
					s.delay.MaxDelay, s.whereWait = d, s.where
				}
				s.delay.MaxOtherRuns = max(s.delay.MaxOtherRuns, other)
			}
			if h, busy := onP[e.Worker]; busy && h != g {
				violate(i, e, "P %d runs goroutine %d while goroutine %d is still running on it", e.Worker, g, h)
			}
			if s.state == model.Running && s.p >= 0 && onP[s.p] == g {
				delete(onP, s.p)
			}
			s.state, s.p = model.Running, e.Worker
			onP[e.Worker] = g
			runs++
		case traces.KindPollEnd:
			if s.state != model.Running {
				violate(i, e, "goroutine %d stops running on P %d but it was %v", g, e.Worker, s.state)
			} else if s.p != e.Worker {
				violate(i, e, "goroutine %d stops running on P %d but it ran on P %d", g, e.Worker, s.p)
			}
			if onP[e.Worker] == g {
				delete(onP, e.Worker)
			}
			if s.p >= 0 && onP[s.p] == g {
				delete(onP, s.p)
			}
			s.p = -1
			if e.Result == traces.ResultReady || e.Result == traces.ResultPanic {
				s.state = model.Done
			} else {
				s.state = model.Waiting
				if e.Detail != "" {
					s.where = e.Detail
				}
			}
		case traces.KindWake:
			switch s.state {
			case model.Waiting:
				s.state, s.readyAt, s.readyRuns = model.Queued, now, runs
			case model.Done:
				violate(i, e, "goroutine %d woken after it exited", g)
			case model.Idle:
				violate(i, e, "goroutine %d woken but never created", g)
			default:
				violate(i, e, "goroutine %d woken while %v: only a blocked goroutine can be woken", g, s.state)
			}
		}
	}
	rep.Goroutines = len(gs)
	for g, s := range gs {
		if s.state == model.Queued {
			w := time.Duration(end - s.readyAt)
			r := Runnable{Goroutine: g, Waited: w, Stuck: w >= opt.StuckAfter, Where: s.where}
			rep.LeftRunnable = append(rep.LeftRunnable, r)
			if r.Stuck {
				rep.Verdict = checker.Violated
				if len(rep.Violations) < opt.MaxViolations {
					rep.Violations = append(rep.Violations, Violation{Index: -1, Goroutine: g,
						Msg: fmt.Sprintf("goroutine %d was runnable for %v at the end of the trace and never ran (starved, or a lost run)", g, w)})
				}
			}
		}
		if s.delay.Waits > 0 {
			s.delay.MeanDelay = s.sum / time.Duration(s.delay.Waits)
			s.delay.Where = s.whereWait
			rep.Delays = append(rep.Delays, s.delay)
			rep.MaxDelay = max(rep.MaxDelay, s.delay.MaxDelay)
			rep.MaxOtherRuns = max(rep.MaxOtherRuns, s.delay.MaxOtherRuns)
		}
	}
	slices.SortFunc(rep.LeftRunnable, func(a, b Runnable) int {
		return cmp.Or(cmp.Compare(b.Waited, a.Waited), cmp.Compare(a.Goroutine, b.Goroutine))
	})
	slices.SortFunc(rep.Delays, func(a, b Delay) int { return cmp.Compare(a.Goroutine, b.Goroutine) })
	rep.WorstByTime = slices.Clone(rep.Delays)
	slices.SortStableFunc(rep.WorstByTime, func(a, b Delay) int { return cmp.Compare(b.MaxDelay, a.MaxDelay) })
	rep.WorstByTime = rep.WorstByTime[:min(opt.Worst, len(rep.WorstByTime))]
	rep.WorstByRuns = slices.Clone(rep.Delays)
	slices.SortStableFunc(rep.WorstByRuns, func(a, b Delay) int { return cmp.Compare(b.MaxOtherRuns, a.MaxOtherRuns) })
	rep.WorstByRuns = rep.WorstByRuns[:min(opt.Worst, len(rep.WorstByRuns))]
	return rep
}

// WriteText writes the report for people: the verdict, the violations, the
// fairness figures with the worst cases and their stacks, the goroutines
// left runnable, and what a Go trace cannot show.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Go runtime trace: %d events, %d goroutines: lifecycle %s\n", r.Events, r.Goroutines, r.Verdict)
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  violation: %s\n", v.Msg)
	}
	fmt.Fprintf(&b, "fairness: longest wait from runnable to running %v; most runs of other goroutines during one wait %d\n", r.MaxDelay, r.MaxOtherRuns)
	if len(r.WorstByTime) > 0 {
		b.WriteString("worst waits in trace time:\n")
		for _, d := range r.WorstByTime {
			fmt.Fprintf(&b, "  goroutine %d: %v (mean %v over %d waits, up to %d other runs)\n", d.Goroutine, d.MaxDelay, d.MeanDelay, d.Waits, d.MaxOtherRuns)
			writeStack(&b, d.Where, d.Start)
		}
		b.WriteString("worst waits in runs of other goroutines:\n")
		for _, d := range r.WorstByRuns {
			fmt.Fprintf(&b, "  goroutine %d: %d other runs (longest wait %v)\n", d.Goroutine, d.MaxOtherRuns, d.MaxDelay)
			writeStack(&b, d.Where, d.Start)
		}
	}
	if len(r.LeftRunnable) > 0 {
		fmt.Fprintf(&b, "runnable at the end of the trace, never run since: %d goroutines\n", len(r.LeftRunnable))
		for i, g := range r.LeftRunnable {
			if i == 5 {
				fmt.Fprintf(&b, "  … and %d more\n", len(r.LeftRunnable)-5)
				break
			}
			note := "(the trace may have stopped just after its wake)"
			if g.Stuck {
				note = "(stuck: a finding)"
			}
			fmt.Fprintf(&b, "  goroutine %d, runnable for %v %s\n", g.Goroutine, g.Waited, note)
		}
	}
	if r.NoProc > 0 {
		fmt.Fprintf(&b, "%d transitions without a P were left out\n", r.NoProc)
	}
	b.WriteString("a Go runtime trace cannot show:\n")
	for _, c := range r.CannotShow {
		fmt.Fprintf(&b, "  - %s\n", c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeStack(b *strings.Builder, where, start string) {
	if where == "" {
		where = start
	}
	if where == "" {
		b.WriteString("    (no stack in the trace)\n")
		return
	}
	lines := strings.Split(where, "\n")
	for i, l := range lines {
		if i == 8 {
			break
		}
		fmt.Fprintf(b, "    %s\n", strings.ReplaceAll(l, "\t", "    "))
	}
}
