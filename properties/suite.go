package properties

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/control"
)

var checksFlag = flag.Int("properties.checks", envInt("PROPERTIES_CHECKS", 200), "properties: cases per property (overrides -rapid.checks; env PROPERTIES_CHECKS)")

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// Config says how the suite runs. The zero Config runs every property with
// the default number of cases, timeouts and shrink time.
type Config struct {
	// Checks is the number of cases per property; 0 means the value of the
	// -properties.checks flag (default 200, env PROPERTIES_CHECKS).
	Checks int
	// Seed is rapid's base seed; 0 means rapid's -rapid.seed flag, or a
	// random seed when that is 0 too.
	Seed uint64
	// Only runs just the named properties; Skip leaves the named ones out.
	Only, Skip []string
	// Cases, when not empty, draws only the cases of the named properties,
	// while every selected property is still checked on them: how a
	// failure found in one property's cases is drawn again.
	Cases []string
	// Timeout bounds one case (default 10s); Idle is how long a case may
	// show no poll, wake or spawn before it counts as hung (default 500ms).
	Timeout, Idle time.Duration
	// ShrinkTime bounds the shrinking of one failure (default 5s).
	ShrinkTime time.Duration
	// StopAtFirst stops the suite at the first failing property.
	StopAtFirst bool
	// Context, when cancelled, ends the run early: the properties not yet
	// finished are reported with verdict Unknown. Nil means never.
	Context context.Context
	// Progress, when set, is called after every case.
	Progress func(Progress)
	// Uncontrolled runs an executor.Controllable executor as a black box
	// too. By default its cases run under a control.Controller: one
	// goroutine at a time, each choice drawn from rapid (so the schedule
	// shrinks with the workload and a failure replays exactly), a hang
	// found at once as a deadlock.
	Uncontrolled bool
	// PCTDepth, when above 0, draws schedules with PCT of that depth
	// (priorities and change points from rapid) instead of a choice from
	// rapid at every decision.
	PCTDepth int

	// Coverage, when set, also measures the executor's spec coverage
	// (Cover; its New is the suite's constructor) and fails below its Goal
	// or on a visited state outside the model (coverage.go).
	Coverage *CoverConfig
}

// controlSteps bounds the yield points of one controlled case.
const controlSteps = 500_000

func (c *Config) timeout() time.Duration { return orDefault(c.Timeout, 10*time.Second) }
func (c *Config) idle() time.Duration    { return orDefault(c.Idle, 500*time.Millisecond) }
func (c *Config) shrinkTime() time.Duration {
	return orDefault(c.ShrinkTime, 5*time.Second)
}
func (c *Config) checks() int {
	if c.Checks > 0 {
		return c.Checks
	}
	return *checksFlag
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (c *Config) selected() ([]*Property, error) {
	for _, n := range append(append(append([]string(nil), c.Only...), c.Skip...), c.Cases...) {
		if _, err := Lookup(n); err != nil {
			return nil, err
		}
	}
	var out []*Property
	for _, p := range suite {
		if len(c.Only) > 0 && !contains(c.Only, p.Name) || contains(c.Skip, p.Name) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Option changes the Config of Run.
type Option func(*Config)

// WithConfig replaces the whole Config.
func WithConfig(c Config) Option { return func(d *Config) { *d = c } }

// Checks sets the number of cases per property.
func Checks(n int) Option { return func(c *Config) { c.Checks = n } }

// Only runs just the named properties.
func Only(names ...string) Option { return func(c *Config) { c.Only = append(c.Only, names...) } }

// Skip leaves out the named properties.
func Skip(names ...string) Option { return func(c *Config) { c.Skip = append(c.Skip, names...) } }

// BlackBox runs an executor.Controllable executor as a black box too, on
// the Go scheduler (Config.Uncontrolled).
func BlackBox() Option { return func(c *Config) { c.Uncontrolled = true } }

// Progress reports one finished case.
type Progress struct {
	Property string
	Case     int // cases of this property so far, shrinking included
	Checks   int // cases asked for
	Failed   bool
	Elapsed  time.Duration // since the suite started
}

// Result is the outcome of one property.
type Result struct {
	Property *Property
	// Verdict is Holds when every case passed, Violated on a failure, and
	// Unknown when the property was skipped or the run was interrupted.
	Verdict checker.Verdict
	Skipped string // why the property did not apply, if it did not
	// Cases counts the cases run up to and including the first failing one
	// (all of them when none failed); Runs counts every case, shrinking
	// included.
	Cases, Runs int
	// NoVerdict counts the controlled cases stopped by a budget before
	// they could show anything (see EndBudget); they pass.
	NoVerdict int
	// ToFailure is the time from the start of the suite to the end of the
	// first failing case; Duration is the property's whole time.
	ToFailure, Duration time.Duration
	// For a failure: the check that failed (which may be another property
	// than the one whose workloads found it), its stable message, the
	// volatile detail of the shrunk case, the shrunk workload and what the
	// executor did on it.
	Caught         string
	Message        string
	Detail         string
	Counterexample *Workload
	Observation    *Observation
	// Seed is the rapid seed that reproduces the failure, when known:
	// Check with this Seed, Checks 1 and Cases naming Property draws the
	// failing case again.
	Seed uint64
	// First is the detail and workload of the first failing case, before
	// shrinking (which may not reproduce a failure that depends on timing).
	First string
	// FirstChecksum is the schedule checksum of the first failing case,
	// when it ran under the controller: the replay by Seed reproduces it
	// (shrinking, bounded by time, may end elsewhere).
	FirstChecksum uint64
	// Output is rapid's own report of the failure, for Check (Run writes it
	// to the test log).
	Output string
}

// Err is the failure of r as an error, or nil.
func (r *Result) Err() error {
	if r.Verdict != checker.Violated {
		return nil
	}
	return fmt.Errorf("%s: %s (%s): %s", r.Property.Name, r.Caught, protects(r.Caught), r.Message)
}

func protects(name string) string {
	if p, err := Lookup(name); err == nil {
		return p.Protects()
	}
	return "?"
}

// Report is the outcome of a whole suite run.
type Report struct {
	Results  []*Result
	Duration time.Duration
	Checks   int

	Coverage *CoverResult // when Config.Coverage was set
}

// Err joins the failures of every property, or returns nil.
func (r *Report) Err() error {
	var errs []error
	for _, x := range r.Results {
		errs = append(errs, x.Err())
	}
	return errors.Join(errs...)
}

// Verdict is Violated if any property failed, Holds if every selected
// property held, and Unknown otherwise (skipped or interrupted).
func (r *Report) Verdict() checker.Verdict {
	v := checker.Holds
	for _, x := range r.Results {
		switch x.Verdict {
		case checker.Violated:
			return checker.Violated
		case checker.Unknown:
			if x.Skipped == "" {
				v = checker.Unknown
			}
		}
	}
	return v
}

// rapid reads its settings from package flags; the suite sets them for the
// length of a run, one run at a time.
var rapidMu sync.Mutex

func withRapid(cfg *Config, quiet bool, fn func()) {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	set := map[string]string{
		"rapid.checks":     strconv.Itoa(cfg.checks()),
		"rapid.shrinktime": cfg.shrinkTime().String(),
	}
	if cfg.Seed != 0 {
		set["rapid.seed"] = strconv.FormatUint(cfg.Seed, 10)
	}
	if quiet {
		set["rapid.nofailfile"] = "true"
	}
	old := map[string]string{}
	for k, v := range set {
		if f := flag.Lookup(k); f != nil {
			old[k] = f.Value.String()
			_ = f.Value.Set(v)
		}
	}
	defer func() {
		for k, v := range old {
			_ = flag.Lookup(k).Value.Set(v)
		}
	}()
	fn()
}

// Run runs the suite on the executors newExecutor makes, one subtest per
// property named "name[RULE]", each a rapid check whose failures shrink.
// Every case gets a fresh executor. It is the function to call from a test:
//
//	func TestMyExecutor(t *testing.T) {
//		properties.Run(t, func() executor.Executor { return myexec.New(4) })
//	}
//
// Run sets rapid's -rapid.checks (from Config.Checks or -properties.checks)
// and -rapid.shrinktime for its duration; do not run it in parallel with
// other rapid checks.
func Run(t *testing.T, newExecutor func() executor.Executor, opts ...Option) {
	t.Helper()
	var cfg Config
	for _, o := range opts {
		o(&cfg)
	}
	sel, err := cfg.selected()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	withRapid(&cfg, false, func() {
		for _, p := range sel {
			if len(cfg.Cases) > 0 && !contains(cfg.Cases, p.Name) {
				continue
			}
			res := &Result{Property: p}
			ok := t.Run(subtestName(p), func(t *testing.T) {
				if why := applies(p, newExecutor); why != "" {
					t.Skip(why)
				}
				defer func() {
					if res.First != "" {
						t.Logf("first failing case, before shrinking: %s", res.First)
					}
				}()
				rapid.Check(t, caseFunc(newExecutor, p, sel, &cfg, res, start))
			})
			if !ok && cfg.StopAtFirst {
				break
			}
		}
	})
	runCoverage(t, newExecutor, &cfg)
}

func subtestName(p *Property) string {
	return p.Name + "[" + strings.ReplaceAll(strings.ReplaceAll(p.Protects(), " ", "-"), ":", "") + "]"
}

// applies returns why p cannot be checked on the executors newExecutor
// makes, or "".
func applies(p *Property, newExecutor func() executor.Executor) string {
	if p.Applies == nil {
		return ""
	}
	ex := newExecutor()
	defer ex.Close()
	if !p.Applies(ex) {
		return fmt.Sprintf("%s does not apply to %T", p.Name, ex)
	}
	return ""
}

// caseFunc is one rapid case of property p: draw a workload, run it on a
// fresh executor, check every selected property.
func caseFunc(newExecutor func() executor.Executor, p *Property, sel []*Property, cfg *Config, res *Result, start time.Time) func(*rapid.T) {
	var usable []*Property
	ex0 := newExecutor()
	for _, q := range sel {
		if (q.Applies == nil || q.Applies(ex0)) && (!q.Costly || q == p) {
			usable = append(usable, q)
		}
	}
	ex0.Close()
	failed := false
	return func(t *rapid.T) {
		if cfg.Context != nil && cfg.Context.Err() != nil {
			// Interrupted: end rapid's loop now rather than after its
			// remaining cases (ten million return in seconds, not at
			// once). Rapid reports the panic through the quietTB, whose
			// FailNow ends Check's call; Check then sees the context
			// and says Unknown, not Violated (res.Caught stays empty).
			panic(errInterrupted)
		}
		w := p.Shape.Draw(t)
		ex := newExecutor()
		var ctl *control.Controller
		if _, ok := ex.(executor.Controllable); ok && !cfg.Uncontrolled {
			var s control.Strategy = control.RapidChooser(t)
			if cfg.PCTDepth > 0 {
				s = control.RapidPCT(t, cfg.PCTDepth, 200)
			}
			ctl = control.NewWith(s, control.Config{MaxSteps: controlSteps, Stall: cfg.timeout()})
		}
		o := runCase(ex, w, cfg, ctl)
		res.Runs++
		if !failed {
			res.Cases++
		}
		if o.End == EndBudget {
			res.NoVerdict++
		}
		for _, q := range usable {
			err := q.Check(o)
			if err == nil {
				continue
			}
			if !failed {
				failed = true
				res.ToFailure = time.Since(start)
				res.First = fmt.Sprintf("%s: %v\n%s", q.Name, err, w)
				res.FirstChecksum = o.Checksum
			}
			res.Caught, res.Message, res.Detail = q.Name, q.Fails, err.Error()
			res.Counterexample, res.Observation = w, o
			if cfg.Progress != nil {
				cfg.Progress(Progress{Property: p.Name, Case: res.Runs, Checks: cfg.checks(), Failed: true, Elapsed: time.Since(start)})
			}
			t.Logf("workload (%d tasks, size %d; %s after %v):\n%s", len(o.Tasks), w.Size(), o.End, o.Elapsed.Round(time.Microsecond), w)
			t.Logf("%s: %v", q.Name, err)
			t.Fatalf("%s (%s): %s", q.Name, q.Protects(), q.Fails)
		}
		if cfg.Progress != nil {
			cfg.Progress(Progress{Property: p.Name, Case: res.Runs, Checks: cfg.checks(), Failed: failed, Elapsed: time.Since(start)})
		}
	}
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
	rep := &Report{Checks: cfg.checks()}
	if err != nil {
		rep.Results = append(rep.Results, &Result{Property: &Property{Name: "config"}, Verdict: checker.Violated, Caught: "config", Message: err.Error()})
		return rep
	}
	start := time.Now()
	withRapid(&cfg, true, func() {
		for _, p := range sel {
			if len(cfg.Cases) > 0 && !contains(cfg.Cases, p.Name) {
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
			t0 := time.Now()
			tb := &quietTB{name: p.Name}
			func() {
				defer func() {
					if x := recover(); x != nil && x != errFailNow {
						panic(x)
					}
				}()
				rapid.Check(tb, caseFunc(newExecutor, p, sel, &cfg, res, start))
			}()
			res.Duration = time.Since(t0)
			res.Output = tb.output()
			switch {
			case res.Caught != "":
				res.Verdict = checker.Violated
				if m := seedRE.FindStringSubmatch(res.Output); m != nil {
					res.Seed, _ = strconv.ParseUint(m[1], 10, 64)
				}
			case cfg.Context != nil && cfg.Context.Err() != nil:
				res.Verdict = checker.Unknown
			case tb.failed:
				// rapid failed without a case failing: report it as is.
				res.Verdict, res.Caught, res.Message = checker.Violated, p.Name, firstLine(res.Output)
			default:
				res.Verdict = checker.Holds
			}
			if res.Verdict == checker.Violated && cfg.StopAtFirst {
				break
			}
		}
	})
	checkCoverage(newExecutor, &cfg, rep)
	rep.Duration = time.Since(start)
	return rep
}

// CheckErr runs the suite outside a test and returns its failures joined, or
// nil when every property held.
func CheckErr(newExecutor func() executor.Executor, cfg Config) error {
	return Check(newExecutor, cfg).Err()
}

var seedRE = regexp.MustCompile(`-rapid\.seed=(\d+)`)

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// quietTB is the rapid.TB of Check: it keeps what rapid reports instead of
// printing it, and turns FailNow into a panic that Check recovers.
type quietTB struct {
	name   string
	mu     sync.Mutex
	failed bool
	out    strings.Builder
}

var errFailNow = errors.New("properties: rapid stopped the check")

// errInterrupted ends rapid's loop once Config.Context is done.
var errInterrupted = errors.New("properties: interrupted")

func (tb *quietTB) Helper()      {}
func (tb *quietTB) Name() string { return tb.name }
func (tb *quietTB) Logf(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	fmt.Fprintf(&tb.out, format+"\n", args...)
}
func (tb *quietTB) Log(args ...any) { tb.Logf("%s", fmt.Sprint(args...)) }
func (tb *quietTB) Errorf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.Fail()
}
func (tb *quietTB) Error(args ...any) { tb.Errorf("%s", fmt.Sprint(args...)) }
func (tb *quietTB) Fatalf(format string, args ...any) {
	tb.Errorf(format, args...)
	tb.FailNow()
}
func (tb *quietTB) Fatal(args ...any) { tb.Fatalf("%s", fmt.Sprint(args...)) }
func (tb *quietTB) FailNow() {
	tb.Fail()
	panic(errFailNow)
}
func (tb *quietTB) Fail() {
	tb.mu.Lock()
	tb.failed = true
	tb.mu.Unlock()
}
func (tb *quietTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}
func (tb *quietTB) Skipf(format string, args ...any) { tb.Logf(format, args...); tb.SkipNow() }
func (tb *quietTB) Skip(args ...any)                 { tb.Log(args...); tb.SkipNow() }
func (tb *quietTB) SkipNow()                         { panic(errFailNow) }

func (tb *quietTB) output() string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.out.String()
}
