package properties

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
	"github.com/execspec/execspec/properties/internal/guard"
	"github.com/execspec/execspec/properties/internal/rapidrun"
	"github.com/execspec/execspec/properties/internal/text"
)

// A run of the suite goes through the selected properties in order; each
// is one rapid check of its own cases. Every case is checked by every
// usable property, so one defect can fail many checks on one case, and be
// found again by the cases of every later property. The runner reports a
// defect once:
//
//   - on a failing case, the check that failed first (the earliest
//     violation seen while the case ran; else the first failing check in
//     list order) is the failure, and the others are its Consequences;
//   - a later property's case whose first failing check was already
//     reported is Masked: it passes, and the property goes on with fresh
//     cases, so a second, independent defect is still found and reported
//     as a failure of its own.
type runner struct {
	t           *testing.T // the running subtest of Run; nil under Check
	eng         engine
	newExecutor func() executor.Executor
	sel         []*Property
	cfg         *Config
	start       time.Time

	mu     sync.Mutex
	caught map[string]caughtAt // checks reported as failures by earlier properties
}

// caughtAt is where a check's failure was reported: under property under,
// whose shrunk case failed root first (root is the check itself, or the
// one it failed as a consequence of).
type caughtAt struct{ under, root string }

func newRunner(newExecutor func() executor.Executor, sel []*Property, cfg *Config) *runner {
	return &runner{newExecutor: newExecutor, sel: sel, cfg: cfg, start: time.Now(), caught: map[string]caughtAt{}}
}

// masked reports whether a case whose first failing check is q, with
// error err, shows a defect already reported, and where: q itself, a check
// q can be a consequence of, or — for the conformance check, which sees
// every defect that reaches the trace — a check that protects the rule err
// breaks. (So a second, independent defect that breaks the same rule as
// one already reported is not reported again in the same run; it shows
// once the first is fixed.)
func (rn *runner) masked(q *Property, err error) (caughtAt, bool) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if c, ok := rn.caught[caughtKey(q.Name, err)]; ok {
		return c, true
	}
	for _, name := range q.ConsequenceOf {
		if c, ok := rn.caught[name]; ok {
			return caughtAt{c.under, name}, true
		}
	}
	var cerr *conform.Error
	if q.Name == checkConformance && errors.As(err, &cerr) {
		if cerr.LostWake() {
			// A re-queue the executor never made is a lost wake: the
			// same defect as one the wake checks reported.
			for _, name := range lostWakeChecks {
				if c, ok := rn.caught[name]; ok {
					return caughtAt{c.under, name}, true
				}
			}
		}
		for _, p := range suite {
			if c, ok := rn.caught[p.Name]; ok && p.Rule != 0 && p.Rule == cerr.Rule {
				return caughtAt{c.under, p.Name}, true
			}
		}
	}
	return caughtAt{}, false
}

// lostWakeChecks are the checks that see a lost wake from outside.
var lostWakeChecks = []string{checkLostWakeup, checkDuringPoll, checkAnyGoroutine}

// caughtKey is the key of a failure of check with err in runner.caught:
// the check's name, and for conformance, which sees every defect that
// reaches the trace, its name and the rule broken ("conformance:WAKE"), so
// that a conformance failure of another rule is still reported.
func caughtKey(check string, err error) string {
	var cerr *conform.Error
	if check == checkConformance && errors.As(err, &cerr) {
		return check + ":" + cerr.Rule.String()
	}
	return check
}

func (rn *runner) markCaught(check string, at caughtAt) {
	rn.mu.Lock()
	if _, ok := rn.caught[check]; !ok {
		rn.caught[check] = at
	}
	rn.mu.Unlock()
}

// property runs the rapid check of p on tb and fills res. It returns
// once rapid has finished (shrinking included).
func (rn *runner) property(tb *rapidrun.TB, p *Property, res *Result) {
	t0 := time.Now()
	func() {
		defer func() {
			if x := recover(); x != nil && x != rapidrun.ErrFailNow {
				panic(x)
			}
		}()
		rapid.Check(tb, rn.caseFunc(p, res))
	}()
	res.Duration = time.Since(t0)
	res.Done = time.Since(rn.start)
	res.Output = tb.Output()
	switch {
	case res.Caught != "":
		res.Verdict, res.Standing, res.Cause = checker.Violated, ReportedHere, res.Caught
		if seed, ok := rapidrun.Seed(res.Output); ok {
			res.Seed = seed
		}
		rn.markCaught(caughtKey(res.Caught, res.err), caughtAt{p.Name, res.Caught})
		for _, c := range res.Consequences {
			rn.markCaught(c[:strings.IndexByte(c, ':')], caughtAt{p.Name, res.Caught})
		}
	case res.Violating > 0:
		// The property's own check failed, but only on cases that showed
		// a defect already reported: violated, reported elsewhere.
		res.Verdict, res.Standing = checker.Violated, Consequence
		if res.Cause == p.Name {
			res.Standing = ReportedElsewhere
		}
	case rn.cfg.Context != nil && rn.cfg.Context.Err() != nil:
		res.Verdict = checker.Unknown
	case res.TimeUp:
		res.Verdict = checker.Holds // on the cases the budget allowed
	case tb.Failed():
		// rapid failed without a case failing: report it as is.
		res.Verdict, res.Caught, res.Message = checker.Violated, p.Name, text.FirstLine(res.Output)
	default:
		res.Verdict = checker.Holds
	}
}

// caseFunc is one rapid case of property p: draw a workload, run it on a
// fresh executor, check every usable property.
func (rn *runner) caseFunc(p *Property, res *Result) func(*rapid.T) {
	cfg := rn.cfg
	var usable []*Property
	var conformP *Property // the conformance check, when selected and usable on failing cases only
	ex0, err := guard.Fresh(rn.newExecutor)
	if err != nil {
		return func(t *rapid.T) { t.Fatalf("%v", err) }
	}
	for _, q := range rn.sel {
		switch {
		case q.Applies != nil && !q.Applies(ex0):
		case !q.Costly || q == p:
			usable = append(usable, q)
		case q.Name == checkConformance:
			conformP = q
		}
	}
	_ = guard.CloseWithin(ex0, probeClose)
	failed := false
	return func(t *rapid.T) {
		if cfg.Context != nil && cfg.Context.Err() != nil {
			// Interrupted: end rapid's loop now rather than after its
			// remaining cases (ten million return in seconds, not at
			// once). Rapid reports the panic through the rapidrun.TB, whose
			// FailNow ends the property; property then sees the context
			// and says Unknown, not Violated (res.Caught stays empty).
			panic(errInterrupted)
		}
		rn.timeUp(res, failed)
		w := p.Shape.Draw(t)
		var o *Observation
		if rn.eng.On {
			o = rn.instrumentedCase(t, w)
		} else {
			ex, err := guard.Fresh(rn.newExecutor)
			if err != nil {
				t.Fatalf("%v", err)
			}
			var ctl *control.Controller
			if _, ok := ex.(executor.Controllable); ok && !cfg.Uncontrolled && !cfg.NoHook {
				var s control.Strategy = control.RapidChooser(t)
				if cfg.PCTDepth > 0 {
					s = control.RapidPCT(t, cfg.PCTDepth, 200)
				}
				ctl = control.NewWith(s, control.Config{MaxSteps: controlSteps, Stall: cfg.timeout()})
			}
			o = runCase(ex, w, cfg, ctl)
		}
		res.Runs++
		if !failed {
			res.Cases++
		}
		if o.End == EndBudget {
			res.NoVerdict++
		}
		res.Figures.add(o)
		fails := failures(usable, o)
		progress := func() {
			if cfg.Progress != nil {
				cfg.Progress(Progress{Property: p.Name, Case: res.Runs, Checks: cfg.checks(), Failed: failed, Elapsed: time.Since(rn.start)})
			}
		}
		if len(fails) == 0 {
			progress()
			return
		}
		if conformP != nil {
			// The case failed: conformance, which names the earliest
			// departure from the model, is worth its cost now.
			if err := conformP.Check(o); err != nil {
				fails = leadWithRoot(append(fails, failure{conformP, err}))
			}
		}
		first := fails[0]
		if at, ok := rn.masked(first.check, first.err); ok {
			res.Masked++
			for _, f := range fails {
				if f.check == p {
					if res.Violating == 0 {
						res.Cause, res.ReportedUnder = at.root, at.under
					}
					res.Violating++
				}
			}
			progress()
			return
		}
		if !failed {
			failed = true
			res.ToFailure = time.Since(rn.start)
			res.First = fmt.Sprintf("%s: %s\n%s", first.check.Name, text.Clip(first.err.Error(), 20, 200), w)
			res.FirstChecksum = o.Checksum
		}
		q := first.check
		res.Caught, res.Message, res.Detail, res.err = q.Name, q.Fails, text.FoldLines(first.err.Error()), first.err
		res.Counterexample, res.Observation = w, o
		res.Consequences = res.Consequences[:0]
		for _, f := range fails[1:] {
			res.Consequences = append(res.Consequences, f.check.Name+": "+text.Clip(text.FirstLine(f.err.Error()), 1, 150))
		}
		progress()
		t.Logf("workload (%d tasks, size %d; %s after %v):\n%s", len(o.Tasks), w.Size(), o.End, o.Elapsed.Round(time.Microsecond), w)
		t.Logf("%s: %v", q.Name, first.err)
		t.Fatalf("%s (%s): %s", q.Name, q.Protects(), q.Fails)
	}
}

// failure is one check that failed on a case.
type failure struct {
	check *Property
	err   error
}

// failures runs every usable check on o and returns the failing ones, the
// first failure first: the check of the earliest violation seen while the
// case ran, if it failed, else the first failing check in list order.
func failures(usable []*Property, o *Observation) []failure {
	var out []failure
	for _, q := range usable {
		if err := q.Check(o); err != nil {
			out = append(out, failure{q, err})
		}
	}
	if len(out) > 1 && len(o.Violations) > 0 {
		for i, f := range out {
			if f.check.Name == o.Violations[0].check {
				out[0], out[i] = out[i], out[0]
				break
			}
		}
	}
	return leadWithRoot(out)
}

// leadWithRoot puts the conformance failure, if any, first: its first
// violating event is the earliest departure from the model, the root cause
// of what the other checks saw later (a wake that re-queued a finished
// task, before the poll after Ready it led to). The others keep their
// order after it.
func leadWithRoot(fs []failure) []failure {
	for i, f := range fs {
		if f.check.Name == checkConformance && i > 0 {
			c := fs[i]
			copy(fs[1:i+1], fs[:i])
			fs[0] = c
			break
		}
	}
	return fs
}

// Run runs the suite on the executors newExecutor makes, one subtest per
// property named "name[RULE]", each a rapid check whose failures shrink.
// Every case gets a fresh executor. It is the function to call from a test:
//
//	func TestMyExecutor(t *testing.T) {
//		properties.Run(t, func() executor.Executor { return myexec.New(4) })
//	}
//
// A failure is reported once, in at most about 60 lines: the check that
// failed and its rule, the shrunk workload, the detail, the other checks
// that failed on the same case, where the full detail was written (a file
// beside rapid's failfile, under testdata/rapid) and the one command that
// replays it. Later properties go on looking for other defects. Run
// returns the Report, for a test that wants to look at it.
//
// Run sets rapid's -rapid.checks (from Config.Checks or -properties.checks)
// and -rapid.shrinktime for its duration; do not run it in parallel with
// other rapid checks.
//
// Under `verify test` with the executor's package instrumented, an
// executor without the hook (or with NoHook) runs each case as one
// controlled run of the instrumented engine (instrumented.go); the test
// then needs a //execspec:nocontrol line in its doc comment.
func Run(t *testing.T, newExecutor func() executor.Executor, opts ...Option) *Report {
	t.Helper()
	var cfg Config
	for _, o := range opts {
		o(&cfg)
	}
	rep := &Report{Checks: cfg.checks()}
	sel, err := cfg.selected()
	if err == nil {
		err = probeConstructor(newExecutor)
	}
	var eng engine
	if err == nil {
		eng, err = useEngine(t, newExecutor, &cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg.failfile = eng.Failfile
	if eng.On {
		cfg.engineT = t
	}
	if l := eng.line(cfg.checks()); l != "" {
		t.Log(l)
	}
	rn := newRunner(newExecutor, sel, &cfg)
	rn.t, rn.eng = t, eng
	withRapid(&cfg, false, func() {
		for i, p := range sel {
			if len(cfg.Cases) > 0 && !slices.Contains(cfg.Cases, p.Name) {
				continue
			}
			rn.eng.share(sel[i:], cfg.Cases)
			res := &Result{Property: p}
			rep.Results = append(rep.Results, res)
			ok := t.Run(subtestName(p), func(t *testing.T) {
				if why := applies(p, newExecutor); why != "" {
					res.Skipped = why
					t.Skip(why)
				}
				if cfg.Context != nil && cfg.Context.Err() != nil {
					t.Skip("interrupted")
				}
				tb := rapidrun.NewTB(t.Name())
				rn.t = t // the engine's runs are bubbles of this subtest
				rn.property(tb, p, res)
				defer func() {
					if err := eng.record(t.Name(), res); err != nil {
						t.Errorf("properties: writing the outcome for verify test: %v", err)
					}
				}()
				if res.Masked > 0 {
					t.Logf("%d cases showed a defect already reported (%s); this property's own check failed on %d of them", res.Masked, strings.Join(rn.caughtNames(), ", "), res.Violating)
				}
				if f := res.Figures.String(); f != "" {
					t.Log(f)
				}
				if res.Verdict != checker.Violated {
					t.Logf("%s: %d cases in %v", res.Verdict, res.Cases, res.Duration.Round(time.Millisecond))
					return
				}
				if res.Standing != ReportedHere {
					// Violated, and said so, in one line: the
					// counterexample is in the subtest named.
					t.Error(res.Summary(0))
					return
				}
				res.DetailFile, res.Replay = writeDetail(t.Name(), res, eng)
				t.Error(res.Summary(maxSummaryLines))
			})
			if !ok && cfg.StopAtFirst {
				break
			}
		}
	})
	runCoverage(t, newExecutor, &cfg, rep)
	rep.Duration = time.Since(rn.start)
	return rep
}

func (rn *runner) caughtNames() []string {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	var out []string
	for _, p := range suite {
		var keys []string
		for k := range rn.caught {
			if k == p.Name || strings.HasPrefix(k, p.Name+":") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		out = append(out, keys...)
	}
	return out
}

// maxSummaryLines bounds what Run prints for one failure.
const maxSummaryLines = 60

// writeDetail writes the full detail of a failure beside rapid's failfile
// and returns its path and the command that replays the failure. Without a
// failfile (rapid could not write one, or -rapid.nofailfile) the replay is
// by seed and the detail goes to a temporary file. On the instrumented
// engine the replay is verify test's, with the failfile.
func writeDetail(testName string, res *Result, eng engine) (path, replay string) {
	run := "^" + strings.ReplaceAll(regexp.QuoteMeta(testName), "/", "$/^") + "$"
	var dir, base string
	if failfile, ok := rapidrun.Failfile(res.Output); ok {
		replay = fmt.Sprintf("go test -run '%s' -rapid.failfile='%s'", run, failfile)
		if eng.On {
			replay = eng.replay(run, failfile)
			if err := eng.writeNote(failfile, res.Observation); err != nil {
				replay = fmt.Sprintf("(the failfile's note could not be written: %v) %s", err, replay)
			}
		}
		dir, base = filepath.Dir(failfile), strings.TrimSuffix(filepath.Base(failfile), ".fail")+".txt"
	} else {
		replay = fmt.Sprintf("go test -run '%s' -rapid.seed=%d", run, res.Seed)
		dir, base = os.TempDir(), "execspec-"+text.FileSafe(testName)+"-"+strconv.Itoa(os.Getpid())+".txt"
	}
	path = filepath.Join(dir, base)
	var b strings.Builder
	b.WriteString(res.Summary(0))
	fmt.Fprintf(&b, "\nfull detail of the shrunk case:\n%s\n", res.Detail)
	if res.First != "" {
		fmt.Fprintf(&b, "\nfirst failing case, before shrinking:\n%s\n", res.First)
	}
	if o := res.Observation; o != nil {
		b.WriteString("\nwhat each task saw:\n")
		for _, t := range o.Tasks {
			fmt.Fprintf(&b, "task %d: spawned=%v finished=%v completions=%d polls=%v wakes=%s\n", t.ID, t.Spawned, t.Finished, t.Completions, t.Polls, wakeList(t.Wakes))
		}
	}
	if o := res.Observation; o != nil && o.HangStacks != "" {
		fmt.Fprintf(&b, "\ngoroutines when the hang was called (the executor's workers and the wakes that did not return are among them):\n%s\n", o.HangStacks)
	}
	fmt.Fprintf(&b, "\nrapid's report:\n%s", res.Output)
	if err := rapidrun.WriteNew(path, b.String()); err != nil {
		return "", replay
	}
	return path, replay
}

// Check runs the suite outside a test and returns what it found. It is what
// `verify run` calls. Rapid still draws and shrinks the cases; its fail
// files are not written.
func Check(newExecutor func() executor.Executor, cfg Config) *Report {
	// Rapid asks testing.Short, which needs the testing flags registered
	// and parsed. Outside a test binary nothing parses the process's
	// command-line flag set, so an empty parse marks it parsed; in a test
	// binary it already is.
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
	sel, err := cfg.selected()
	if err == nil {
		err = probeConstructor(newExecutor)
	}
	rep := &Report{Checks: cfg.checks()}
	if err != nil {
		rep.Results = append(rep.Results, &Result{Property: &Property{Name: "config"}, Verdict: checker.Violated, Caught: "config", Message: err.Error()})
		return rep
	}
	rn := newRunner(newExecutor, sel, &cfg)
	withRapid(&cfg, true, func() {
		for _, p := range sel {
			if len(cfg.Cases) > 0 && !slices.Contains(cfg.Cases, p.Name) {
				continue
			}
			res := &Result{Property: p}
			rep.Results = append(rep.Results, res)
			if why := applies(p, newExecutor); why != "" {
				res.Skipped = why
				continue
			}
			if cfg.Context != nil && cfg.Context.Err() != nil {
				continue
			}
			rn.property(rapidrun.NewTB(p.Name), p, res)
			if res.Verdict == checker.Violated && cfg.StopAtFirst {
				break
			}
		}
	})
	checkCoverage(newExecutor, &cfg, rep)
	rep.Duration = time.Since(rn.start)
	return rep
}

// CheckErr runs the suite outside a test and returns its failures joined, or
// nil when every property held.
func CheckErr(newExecutor func() executor.Executor, cfg Config) error {
	return Check(newExecutor, cfg).Err()
}
