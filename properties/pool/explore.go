package pool

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/properties/pool/internal/shrink"
)

// Report is what Explore found: each distinct defect once, with its own
// shrunk case, and what the cases exercised.
type Report struct {
	// Findings holds one Finding per distinct Key, in the order found,
	// each on its shrunk case.
	Findings []*Finding
	// Known counts the findings silenced by Config.Known, by key.
	Known map[string]int
	// Cases is the number of workloads run (not counting shrinking).
	Cases int
	// Exercised counts the operations and task kinds the cases ran
	// (Submit, SubmitContext, cancelled, Resize, Wait, Cancel, panic,
	// Goexit, error, hold), so a run that never reached an ability says
	// so.
	Exercised map[string]int
	// Abilities names the optional interfaces the pool has.
	Abilities string
	Elapsed   time.Duration
	// Stopped says why Explore ran fewer than Config.Cases cases.
	Stopped string
	// Unknown counts the controlled runs stopped by the scheduler's step
	// budget: neither a pass nor a finding.
	Unknown int
	// Mode says how the cases ran: ModeStress (free, in a child process
	// unless Config.InProcess) or ModeControl (one case per run of the
	// controlled runtime, under verify test; control.go).
	Mode string
}

// Err joins the findings, or returns nil.
func (r *Report) Err() error {
	return errors.Join(asErrors(r.Findings)...)
}

// Check runs the pool properties on Config.Cases workloads, each on a
// fresh pool from newPool, and fails t once for each distinct defect
// found (property and triggering operation), each with its own shrunk
// case; the stacks of panics and hangs go to t.Log.
func Check(t *testing.T, newPool func() Pool, cfg Config) {
	t.Helper()
	CheckOptions(t, func(Options) Pool { return newPool() }, cfg)
}

// CheckOptions is Check for a constructor that takes the configuration
// each case draws from Config.Space.
//
// The cases run in a child process (the test binary, re-run for this test
// alone) so that a crash of the pool — a panic on a goroutine of its own,
// a fatal error such as a negative WaitGroup counter, os.Exit — is a
// finding (no-crash, with the stack) and the run goes on in a new child
// from the next case; Config.InProcess runs them in the test's process.
func CheckOptions(t *testing.T, newPool func(Options) Pool, cfg Config) {
	t.Helper()
	rep := exploreFor(t, newPool, cfg)
	t.Logf("pool: %s mode: %d cases in %v; abilities [%s]; exercised %v %s", rep.Mode, rep.Cases, rep.Elapsed.Round(time.Millisecond), rep.Abilities, rep.Exercised, rep.Stopped)
	if rep.Unknown > 0 {
		t.Logf("pool: %d controlled runs stopped by the step budget (unknown: neither passed nor failed)", rep.Unknown)
	}
	for k, n := range rep.Known {
		t.Logf("known defect %s seen in %d cases", k, n)
	}
	for _, f := range rep.Findings {
		t.Errorf("%v", f)
		switch {
		case f.Schedule != "":
			t.Logf("%s: found after %v (case %d) under control; shrunk; its schedule showed it again in %d of %d replays; replay it with:\n\t%s", f.Key(), f.After.Round(time.Millisecond), f.Case, f.Failures, f.Runs, f.Replay)
		case f.Runs > 0:
			t.Logf("%s: found after %v (case %d); reproduced in %d of %d runs of the shrunk case", f.Key(), f.After.Round(time.Millisecond), f.Case, f.Failures, f.Runs)
		case rep.Mode == ModeStress:
			t.Logf("%s: found after %v (case %d); not shrunk", f.Key(), f.After.Round(time.Millisecond), f.Case)
		}
		if f.Stack != "" {
			t.Logf("%s stack:\n%s", f.Key(), f.Stack)
		}
	}
}

// Run is Explore without the report: the distinct findings joined, or nil.
func Run(newPool func() Pool, cfg Config) error {
	rep := Explore(func(Options) Pool { return newPool() }, cfg)
	return rep.Err()
}

// RunOptions is Run for a constructor that takes Options.
func RunOptions(newPool func(Options) Pool, cfg Config) error {
	return Explore(newPool, cfg).Err()
}

// Explore runs cfg.Cases workloads generated from cfg.Seed. It goes on
// after a finding: each new defect (a Key not seen before and not in
// cfg.Known) is shrunk on its own, and the run continues with the next
// case. A hang leaks the goroutines stuck in its pool; later cases use
// fresh pools.
func Explore(newPool func(Options) Pool, cfg Config) *Report {
	return explore(newPool, cfg, exploreHooks{})
}

// exploreHooks let a child process resume a run and record its progress.
type exploreHooks struct {
	from      int                     // cases before it are drawn, not run
	seen      []string                // keys already reported by earlier children
	begin     func(i int, w Workload) // before case i runs
	shrinking func(i int, f *Finding) // before a finding of case i is shrunk
}

func explore(newPool func(Options) Pool, cfg Config, hooks exploreHooks) *Report {
	cfg = cfg.withDefaults()
	start := time.Now()
	rep := &Report{Known: map[string]int{}, Exercised: map[string]int{}, Mode: ModeStress}
	r := rand.New(rand.NewPCG(cfg.Seed, 0xda3e39cb94b95bdb))
	ab, err := probe(newPool, drawOptions(rand.New(rand.NewPCG(cfg.Seed, 1)), cfg))
	if err != nil {
		rep.Findings = append(rep.Findings, err)
		rep.Elapsed = time.Since(start)
		return rep
	}
	rep.Abilities = ab.String()
	seen := map[string]bool{}
	for _, k := range hooks.seen {
		seen[k] = true
	}
	hangs := 0
	for i := range cfg.Cases {
		if hangs >= cfg.MaxHangs {
			// Each hang leaks its goroutines and costs a Timeout; the
			// distinct ones have been reported.
			rep.Stopped = fmt.Sprintf("stopped after %d hanging cases", hangs)
			break
		}
		w := generate(r, cfg, ab)
		if i < hooks.from {
			continue
		}
		if hooks.begin != nil {
			hooks.begin(i, w)
		}
		rep.Cases++
		exercised(w, ab, rep.Exercised)
		for _, f := range runCase(newPool, w, cfg) {
			if f.Property == NoHang || f.Property == CancelStops {
				hangs++
			}
			if !rep.novel(f, cfg, seen) {
				continue
			}
			if hooks.shrinking != nil {
				hooks.shrinking(i, f)
			}
			after := time.Since(start)
			g := shrinkCase(newPool, w, f, cfg)
			g.After, g.Case = after, i
			rep.Findings = append(rep.Findings, g)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep
}

// novel reports whether f is a defect to shrink and report: not known
// (then counted in r.Known) and its Key not seen before (then marked).
func (r *Report) novel(f *Finding, cfg Config, seen map[string]bool) bool {
	key := f.Key()
	if known(cfg.Known, f) {
		r.Known[key]++
		return false
	}
	if seen[key] {
		return false
	}
	seen[key] = true
	return true
}

// probe builds one pool to learn its abilities, and closes it.
func probe(newPool func(Options) Pool, o Options) (ab abilities, f *Finding) {
	defer func() {
		if r := recover(); r != nil {
			reraiseAbort(r)
			f = finding(NoPanic, "newPool", "newPool panicked: %v", r)
			f.Pool = o.String()
		}
	}()
	p := newPool(o)
	if p == nil {
		return ab, &Finding{Property: NoPanic, Op: "newPool", Detail: "newPool returned nil", Pool: o.String()}
	}
	ab = abilitiesOf(p)
	func() {
		defer func() { reraiseAbort(recover()) }() // the cases will find it
		_ = p.Close()
	}()
	return ab, nil
}

func known(list []string, f *Finding) bool {
	return slices.Contains(list, f.Key()) || slices.Contains(list, f.Property)
}

func exercised(w Workload, ab abilities, m map[string]int) {
	if len(w.Rounds) > 1 {
		m["Wait"] += len(w.Rounds) - 1
	}
	// Counted here first, then added to m once each (a map update per
	// operation was a measurable part of a small case).
	var resize, cancel, withContext, cancelled, submit int
	var works [WorkHold + 1]int
	for _, r := range w.Rounds {
		for _, op := range r.Ops {
			switch op.Kind {
			case OpResize:
				resize++
				continue
			case OpCancel:
				cancel++
				continue
			case OpSubmitContext:
				withContext++
				if op.CancelAfter >= 0 {
					cancelled++
				}
			default:
				submit++
			}
			switch op.Task.Work {
			case WorkGoexit, WorkPanic, WorkError, WorkHold:
				works[op.Task.Work]++
			}
		}
	}
	for _, c := range [...]struct {
		op string
		n  int
	}{{"Resize", resize}, {"Cancel", cancel}, {"SubmitContext", withContext}, {"cancelled", cancelled}, {"Submit", submit}} {
		if c.n > 0 {
			m[c.op] += c.n
		}
	}
	for work, n := range works {
		if n > 0 {
			m[Work(work).String()] += n
		}
	}
}

// shows runs w up to tries times and returns the first finding with key.
func shows(newPool func(Options) Pool, w Workload, key string, cfg Config, tries int) *Finding {
	for range tries {
		for _, f := range runCase(newPool, w, cfg) {
			if f.Key() == key {
				return f
			}
		}
	}
	return nil
}

// shrinkCase makes w smaller while it still shows f's defect, within
// cfg.ShrinkTime, and returns the finding of the smallest case, with how
// often that case showed the defect. A race does not repeat on demand, so
// a candidate counts as showing the defect if one of cfg.Retries runs
// does; a hang costs a Timeout per run, so hang candidates get 2 runs.
func shrinkCase(newPool func(Options) Pool, w Workload, f *Finding, cfg Config) *Finding {
	key := f.Key()
	tries := cfg.Retries
	if f.Property == NoHang || f.Property == CancelStops {
		tries = 2
	}
	deadline := time.Now().Add(cfg.ShrinkTime)
	best := f
	w = shrink.Greedy(w, candidates, func(c Workload) bool {
		g := shows(newPool, c, key, cfg, tries)
		if g != nil {
			best = g
		}
		return g != nil
	}, deadline)
	// How reliably the shrunk case shows it.
	runs := min(tries, 10)
	fails := 0
	for range runs {
		if time.Now().After(deadline.Add(cfg.ShrinkTime / 2)) {
			break
		}
		for _, g := range runCase(newPool, w, cfg) {
			if g.Key() == key {
				fails++
				break
			}
		}
		best.Runs++
	}
	best.Failures = fails
	return best
}

// candidates lists smaller variants of w, the boldest first.
func candidates(w Workload) []Workload {
	var out []Workload
	clone := func() Workload {
		c := w
		c.Rounds = make([]Round, len(w.Rounds))
		for i, r := range w.Rounds {
			c.Rounds[i] = Round{Ops: slices.Clone(r.Ops)}
		}
		return c
	}
	// Fewer rounds.
	for i := range w.Rounds {
		if len(w.Rounds) > 1 {
			c := clone()
			c.Rounds = slices.Delete(c.Rounds, i, i+1)
			out = append(out, c)
		}
	}
	// Each round without a half of its operations, then without a
	// quarter, an eighth, ..., one (shrink.Cuts).
	for i, r := range w.Rounds {
		for _, cut := range shrink.Cuts(len(r.Ops)) {
			c := clone()
			c.Rounds[i].Ops = slices.Delete(c.Rounds[i].Ops, cut[0], cut[1])
			out = append(out, c)
		}
	}
	if w.Submitters > 1 {
		c := clone()
		c.Submitters = 1
		out = append(out, c)
		c = clone()
		c.Submitters--
		out = append(out, c)
	}
	if w.CloseEarly {
		c := clone()
		c.CloseEarly = false
		out = append(out, c)
	}
	// Simpler operations.
	for i, r := range w.Rounds {
		for j, op := range r.Ops {
			for _, s := range simpler(op) {
				c := clone()
				c.Rounds[i].Ops[j] = s
				out = append(out, c)
			}
		}
	}
	return out
}

func simpler(op Op) []Op {
	var out []Op
	t := op.Task
	if op.Kind == OpResize || op.Kind == OpCancel {
		return nil
	}
	if t.Children > 0 {
		o := op
		o.Task.Children = 0
		out = append(out, o)
	}
	if t.Work != WorkNone && t.Work <= WorkSleep {
		o := op
		o.Task.Work, o.Task.Amount = WorkNone, 0
		out = append(out, o)
	}
	if t.Amount > 1 && t.Work != WorkHold {
		o := op
		o.Task.Amount /= 2
		out = append(out, o)
	}
	if op.Kind == OpSubmitContext && op.CancelAfter >= 0 {
		o := op
		o.CancelAfter = -1
		out = append(out, o)
	}
	if op.Weight > 1 {
		o := op
		o.Weight = 1
		out = append(out, o)
	}
	return out
}

// Tasks is a workload of one round of plain submits, for targeted tests.
func Tasks(submitters int, tasks ...Task) Workload {
	var r Round
	for _, t := range tasks {
		r.Ops = append(r.Ops, Op{Kind: OpSubmit, Task: t, CancelAfter: -1, Weight: 1})
	}
	return Workload{Submitters: submitters, Rounds: []Round{r}}
}

// Summary renders a report as lines of text, for a command or a log.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases in %v, abilities [%s]\n", r.Cases, r.Elapsed.Round(time.Millisecond), r.Abilities)
	if r.Stopped != "" {
		fmt.Fprintf(&b, "  %s\n", r.Stopped)
	}
	keys := make([]string, 0, len(r.Exercised))
	for k := range r.Exercised {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  exercised %-14s %d\n", k, r.Exercised[k])
	}
	for k, n := range r.Known {
		fmt.Fprintf(&b, "  known %s: %d cases\n", k, n)
	}
	if len(r.Findings) == 0 {
		b.WriteString("  no findings\n")
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s (found after %v; %d/%d runs of the shrunk case): %v\n", f.Key(), f.After.Round(time.Millisecond), f.Failures, f.Runs, f)
	}
	return b.String()
}
