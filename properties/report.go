package properties

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/properties/coverage"
	"github.com/execspec/execspec/properties/internal/text"
)

// Progress reports one finished case.
type Progress struct {
	Property string
	Case     int // cases of this property so far, shrinking included
	Checks   int // cases asked for
	Failed   bool
	Elapsed  time.Duration // since the suite started
}

// Standing says where a violated property's failure is reported.
type Standing uint8

const (
	// NotViolated: the property holds, is unknown or was skipped.
	NotViolated Standing = iota
	// ReportedHere: this Result reports a failure found by the property's
	// cases, with its shrunk counterexample (Caught names the check that
	// failed first on it, which may be another property's).
	ReportedHere
	// ReportedElsewhere: the property's own check failed, first, on its
	// cases, with a defect that an earlier property's cases had already
	// found and reported (ReportedUnder) as a failure of this very check.
	ReportedElsewhere
	// Consequence: the property's own check failed on its cases, but only
	// on cases where another check (Cause) failed first, and that failure
	// is reported under ReportedUnder: a consequence of the same defect.
	Consequence
)

func (s Standing) String() string {
	return [...]string{"", "reported here", "reported elsewhere", "consequence"}[s]
}

// Result is the outcome of one property.
type Result struct {
	Property *Property
	// Verdict is Holds when every case passed, Violated when the
	// property's own check failed on a case or its cases found a failure,
	// and Unknown when the property was skipped or the run was
	// interrupted. Standing says where a violation is reported: a property
	// violated only by a defect reported under another is Violated too,
	// never Holds.
	Verdict checker.Verdict
	// Standing, for a violation, says where it is reported; Cause is the
	// check that failed first on the cases that violated the property, and
	// ReportedUnder the property whose Result reports that failure with
	// its counterexample (for ReportedElsewhere and Consequence); Violating
	// counts the property's cases on which its own check failed.
	Standing      Standing
	Cause         string
	ReportedUnder string
	Violating     int
	Skipped       string // why the property did not apply, if it did not
	// Cases counts the cases run up to and including the first failing one
	// (all of them when none failed); Runs counts every case, shrinking
	// included.
	Cases, Runs int
	// NoVerdict counts the controlled cases stopped by a budget before
	// they could show anything (see EndBudget); they pass.
	NoVerdict int
	// TimeUp: the property's share of verify test's --time was spent
	// before its cases were all run (instrumented.go).
	TimeUp bool
	// ToFailure is the time from the start of the suite to the end of the
	// first failing case; Duration is the property's whole time; Done is
	// the time from the start of the suite to the end of this property
	// (for a failure: to its shrunk counterexample).
	ToFailure, Duration, Done time.Duration
	// For a failure: the check that failed (which may be another property
	// than the one whose workloads found it), its stable message, the
	// volatile detail of the shrunk case, the shrunk workload and what the
	// executor did on it.
	Caught         string
	err            error // the failure of Caught, for the runner
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
	// Output is rapid's own report of the failure: the draws of the
	// shrunk case, its log, the failfile. Run writes it to DetailFile
	// instead of the test log.
	Output string

	// Consequences are the other checks that failed on the shrunk case:
	// "name: first line of its detail". They are reported under Caught,
	// not as failures of their own.
	Consequences []string
	// Masked counts the cases that failed only in ways an earlier
	// property had already reported (the same defect seen again): they
	// are not counted as failures of this property, which goes on with
	// fresh cases so that an independent defect is still found.
	Masked int
	// Figures are what the cases measured, reported whether or not the
	// property failed.
	Figures Figures
	// DetailFile is where Run wrote the full detail of the failure (beside
	// rapid's failfile), and Replay the one command that replays it. Empty
	// for Check, which writes no files.
	DetailFile, Replay string
}

// Err is the failure of r as an error, or nil. For a property violated by
// a defect reported under another, it says so in one line.
func (r *Result) Err() error {
	if r.Verdict != checker.Violated {
		return nil
	}
	if r.Standing == ReportedElsewhere || r.Standing == Consequence {
		return errors.New(r.Property.Name + ": " + r.State())
	}
	return fmt.Errorf("%s: %s (%s): %s", r.Property.Name, r.Caught, protects(r.Caught), r.Message)
}

// State says the verdict in words, with where a violation is reported:
// "holds", "violated", "violated; reported under exactly-once", "violated
// as a consequence of no-poll-after-ready (reported under exactly-once)".
func (r *Result) State() string {
	switch {
	case r.Skipped != "":
		return "skipped: " + r.Skipped
	case r.Verdict != checker.Violated:
		return r.Verdict.String()
	case r.Standing == ReportedElsewhere:
		return fmt.Sprintf("violated on %d cases; first seen and reported under %s", r.Violating, r.ReportedUnder)
	case r.Standing == Consequence:
		return fmt.Sprintf("violated on %d cases, as a consequence of %s (reported under %s)", r.Violating, r.Cause, r.ReportedUnder)
	case r.Caught != "" && r.Caught != r.Property.Name:
		for _, c := range r.Consequences {
			if strings.HasPrefix(c, r.Property.Name+":") {
				return fmt.Sprintf("violated, as a consequence of %s (reported here)", r.Caught)
			}
		}
		return fmt.Sprintf("violated: its cases found a failure of %s (reported here); its own check held on that case", r.Caught)
	}
	return "violated"
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

	Coverage *coverage.Result // when Config.Coverage was set
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
// property that applies held, and Unknown otherwise (interrupted, or no
// property checked at all: every one skipped).
func (r *Report) Verdict() checker.Verdict {
	v, checked := checker.Holds, false
	for _, x := range r.Results {
		checked = checked || x.Skipped == ""
		switch x.Verdict {
		case checker.Violated:
			return checker.Violated
		case checker.Unknown:
			if x.Skipped == "" {
				v = checker.Unknown
			}
		}
	}
	if !checked {
		return checker.Unknown
	}
	return v
}

// Summary formats a failure for a person: the check that failed and its
// rule, where it was found, the shrunk workload, the detail, the checks that
// failed with it on the same case, where the full detail is and how to
// replay it. With maxLines > 0 the workload, the detail and the list of
// consequences are clipped so that the whole fits in maxLines lines (each
// line at most 200 characters); the full text is in DetailFile. It is ""
// for a result that is not a failure.
func (r *Result) Summary(maxLines int) string {
	if r.Verdict != checker.Violated {
		return ""
	}
	if r.Standing == ReportedElsewhere || r.Standing == Consequence {
		return fmt.Sprintf("%s: %s", r.Property.Name, r.State())
	}
	lim := func(n int) int {
		if maxLines <= 0 {
			return 1 << 30
		}
		return n
	}
	width := 200
	if maxLines <= 0 {
		width = 1 << 30
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n", r.Caught, protects(r.Caught), r.Message)
	where := fmt.Sprintf("  found by the cases of %s: case %d, %v into the run", r.Property.Name, r.Cases, r.ToFailure.Round(time.Millisecond))
	if r.Counterexample != nil {
		where += fmt.Sprintf("; shrunk to size %d", r.Counterexample.Size())
	}
	b.WriteString(where + "\n")
	if r.Counterexample != nil {
		b.WriteString("  workload:\n")
		b.WriteString(text.Indent(text.Clip(strings.TrimRight(r.Counterexample.String(), "\n"), lim(20), width), "    "))
	}
	if r.Detail != "" {
		b.WriteString("  detail:\n")
		b.WriteString(text.Indent(text.Clip(r.Detail, lim(12), width), "    "))
	}
	if len(r.Consequences) > 0 {
		b.WriteString("  also failed on this case, as consequences:\n")
		b.WriteString(text.Indent(text.Clip(strings.Join(r.Consequences, "\n"), lim(8), width), "    - "))
	}
	if r.DetailFile != "" {
		fmt.Fprintf(&b, "  full detail: %s\n", r.DetailFile)
	}
	if r.Replay != "" {
		fmt.Fprintf(&b, "  replay: %s\n", r.Replay)
	} else if r.Seed != 0 {
		fmt.Fprintf(&b, "  replay: Config{Seed: %d, Checks: 1, Cases: []string{%q}}\n", r.Seed, r.Property.Name)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Figures are measurements over the cases of one property: information
// for the person reading the report, failures only where the executor
// stated a bound (see Observation).
type Figures struct {
	// Spurious counts the polls no wake accounted for, over all cases;
	// SpuriousCases the cases with any; SpuriousExample names one.
	Spurious, SpuriousCases int
	SpuriousExample         string
	// MaxDelay is the most polls of other tasks between a task becoming
	// ready and its poll, MaxHeld the most of them that the least busy
	// worker ended (what a bound in polls is checked against: each worker
	// counts apart, since a worker the operating system stops can hold a
	// ready task), and MaxWait the longest wait by the clock, over the
	// fairness cases; Fairness what the executor was held to ("polls",
	// "time", "default", "none promised"); Starved, when the executor
	// promises no fairness, the first task that seemed starved (the case
	// stopped without a verdict).
	MaxDelay int64
	MaxHeld  int64
	MaxWait  time.Duration
	Fairness string
	Starved  string
}

// add accumulates the figures of one case.
func (f *Figures) add(o *Observation) {
	if o.Spurious > 0 {
		f.Spurious += o.Spurious
		f.SpuriousCases++
		if f.SpuriousExample == "" {
			for _, t := range o.Tasks {
				if n, i := spuriousPolls(&t); n > 0 {
					f.SpuriousExample = fmt.Sprintf("task %d polled %d times without a wake of its own (first: poll %d of %d) in a case of %d tasks", t.ID, n, i+1, len(t.Polls), len(o.Tasks))
					break
				}
			}
		}
	}
	if o.FairnessStated != "" && len(o.Workload.Endless) > 0 {
		f.Fairness = o.FairnessStated
		f.MaxDelay = max(f.MaxDelay, o.MaxDelay)
		f.MaxHeld = max(f.MaxHeld, o.MaxHeld)
		f.MaxWait = max(f.MaxWait, o.MaxWait)
		if f.Starved == "" {
			f.Starved = o.Starved
		}
	}
}

// String is one line per figure that has something to say, or "".
func (f *Figures) String() string {
	var b strings.Builder
	if f.Spurious > 0 {
		fmt.Fprintf(&b, "spurious polls: %d in %d cases (%s)\n", f.Spurious, f.SpuriousCases, f.SpuriousExample)
	}
	if f.Fairness != "" {
		fmt.Fprintf(&b, "fairness (bound: %s): at most %d polls of other tasks between ready and poll, %d by the least busy worker; longest wait %v\n", f.Fairness, f.MaxDelay, f.MaxHeld, f.MaxWait.Round(time.Microsecond))
	}
	if f.Starved != "" {
		fmt.Fprintf(&b, "seemingly starved, no fairness promised: %s\n", f.Starved)
	}
	return strings.TrimRight(b.String(), "\n")
}

// String formats the report for a person: one line per property (verdict,
// cases, time, and the failure's check and rule, or why it was skipped),
// its figures indented under it, and a last line with the totals.
func (r *Report) String() string {
	var b strings.Builder
	for _, x := range r.Results {
		name := x.Property.Name
		switch {
		case x.Skipped != "":
			fmt.Fprintf(&b, "%-22s skipped: %s\n", name, x.Skipped)
			continue
		case x.Verdict == checker.Violated && x.Standing != ReportedHere:
			fmt.Fprintf(&b, "%-22s %d cases, %v: %s\n", name, x.Cases, x.Duration.Round(time.Millisecond), x.State())
		case x.Verdict == checker.Violated:
			fmt.Fprintf(&b, "%-22s %-8s %d cases, %v: %s (%s): %s\n", name, x.Verdict, x.Cases, x.Duration.Round(time.Millisecond), x.Caught, protects(x.Caught), x.Message)
		default:
			fmt.Fprintf(&b, "%-22s %-8s %d cases, %v\n", name, x.Verdict, x.Cases, x.Duration.Round(time.Millisecond))
		}
		if x.Masked > 0 {
			fmt.Fprintf(&b, "  %d cases showed a defect already reported (this property's own check failed on %d of them)\n", x.Masked, x.Violating)
		}
		if f := x.Figures.String(); f != "" {
			b.WriteString(text.Indent(f, "  "))
		}
	}
	fmt.Fprintf(&b, "%s: %d properties, %v", r.Verdict(), len(r.Results), r.Duration.Round(time.Millisecond))
	return b.String()
}
