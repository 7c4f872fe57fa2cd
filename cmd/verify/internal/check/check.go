package check

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/gotrace"
	"github.com/execspec/execspec/checker/lin"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// Check is verify check: a recorded trace against the model.
var Check = cli.Command{
	Name:    "check",
	Summary: "check a recorded trace against the model (conformance)",
	Run:     runCheck,
}

type checkFlags struct {
	html, chrome string
	goTrace      bool
	json         bool
	last         int
	lin          bool
	linBudget    time.Duration
	linHTML      string
	stuckAfter   time.Duration
	fairBound    uint64
}

// checkHelp is what `verify check -h` prints before the flags; checkExits, after them.
const checkHelp = `Usage: verify check [flags] FILE

Replays the trace in FILE through the model: every event must be an enabled
instance of its rule in the current state. The first event that is not is
reported with the rule, the premise that failed, the state of every queue and
worker, and the events before it. At the end: lost wakeups, tasks never
completed, and the fairness figures. FILE is JSON lines (docs/trace-format.md)
or the text form; - reads standard input. Output files are written whole or
not at all, never through a symbolic link and never onto FILE.

Examples:
  verify check run.jsonl
  verify check --html run.html run.jsonl
  verify check --go-trace trace.out
`

const checkExits = `Exit codes: 0 conforms, 1 violation, 2 bad input, usage, or an output file not
written (the verdict is printed first), 3 unknown: tasks not DONE at the end, a
limit of the checker reached (named), or SIGINT/SIGTERM (the events read so far
are reported; a violation already found is still exit 1).
`

func checkFlagSet(stderr io.Writer, f *checkFlags) *flag.FlagSet {
	fs := cli.NewFlagSet("verify check", stderr, checkHelp, checkExits)
	fs.StringVar(&f.html, "html", "", "write an HTML timeline of the trace, with the violation marked, to `FILE`")
	fs.StringVar(&f.chrome, "chrome", "", "write the trace in the Chrome trace-event format (Perfetto, chrome://tracing) to `FILE`, streamed as it is read")
	fs.BoolVar(&f.goTrace, "go-trace", false, "FILE is a Go runtime execution trace (runtime/trace), not an execspec trace")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of text")
	fs.IntVar(&f.last, "last", 10, fmt.Sprintf("how many events before the violation to print (0 to %d)", maxLast))
	fs.BoolVar(&f.lin, "linearizability", false, fmt.Sprintf("also check the linearizability of the trace's queue operations (call/ret ticks); traces of more than %d events are unknown", lin.DefaultMaxEvents))
	fs.DurationVar(&f.linBudget, "lin-budget", lin.DefaultBudget, "time limit of the linearizability check, at least 1ms; when it is spent the check stops (within a second) and its verdict is unknown")
	fs.StringVar(&f.linHTML, "lin-html", "", "with --linearizability: write porcupine's visualization of a violation to `FILE`")
	fs.DurationVar(&f.stuckAfter, "stuck-after", time.Second, "with --go-trace: a goroutine runnable this long at the end of the trace, never run, is a finding")
	fs.Uint64Var(&f.fairBound, "fair-bound", 0, "on a partially observed trace: a task that waits more than `N` polls of other tasks from its spawn or a wake to its next poll is a violation (bounded-fairness); 0: the fairness figures only")
	return fs
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f checkFlags
	fs := checkFlagSet(stderr, &f)
	if code, ok := cli.ParseFlags(fs, args); !ok {
		return code
	}
	if err := cli.ValidateFlags(fs, checkFlagSpecs(&f)); err != nil {
		return cli.FlagError(stderr, "check", err)
	}
	softMemoryLimit()
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "verify check: want one trace FILE (see %s check -h)\n", cli.SelfCommand())
		return cli.ExitUsage
	}
	file := fs.Arg(0)
	if err := distinctOutputs(map[string]string{"--html": f.html, "--chrome": f.chrome, "--lin-html": f.linHTML}); err != nil {
		fmt.Fprintf(stderr, "verify check: %v\n", err)
		return cli.ExitUsage
	}
	if f.goTrace {
		return checkGoTrace(ctx, file, &f, stdout, stderr)
	}
	in, closeIn, err := cli.OpenInput(ctx, file)
	if err != nil {
		if cli.IsInterrupted(err) {
			return checkInterrupted(stdout, stderr, &f, file, nil, 0)
		}
		return badInput(stdout, stderr, f.json, file, err)
	}
	defer closeIn()
	src, err := openTrace(in, file)
	if err != nil {
		if cli.IsInterrupted(err) {
			return checkInterrupted(stdout, stderr, &f, file, nil, 0)
		}
		return badInput(stdout, stderr, f.json, file, err)
	}
	h := src.Header()
	if len(h.Unobserved) > 0 {
		return checkPartial(ctx, file, src, h, &f, stdout, stderr)
	}
	if f.fairBound > 0 {
		fmt.Fprintf(stderr, "verify check: --fair-bound: %s is fully observed; the bound applies to partially observed traces (its fairness figures are in the report)\n", cli.Term(file))
		return cli.ExitUsage
	}
	conf, err := conform.New(h)
	if err != nil {
		return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s:1: %w", file, err))
	}
	st, code := streamCheck(ctx, file, src, h, &f, conf, stdout, stderr)
	if st == nil {
		return code
	}
	defer st.abort()
	n, cerr := st.n, st.cerr
	if st.noVerdict() {
		return checkInterrupted(stdout, stderr, &f, file, &h, n)
	}
	var (
		rep   *conform.Report
		mark  *picture.Mark
		limit string // a limit of the checker that stopped it
	)
	switch {
	case cerr != nil && cerr.Limit != "":
		// No Finish: its lists (tasks never completed) are as long as the
		// limit, and say nothing a limit has not already said.
		limit = cerr.Error()
		mark = &picture.Mark{Index: -1, Message: limit, Label: checker.Unknown.String()}
		cerr = nil
	case cerr != nil:
		mark = &picture.Mark{Index: n, Rule: ruleName(cerr), Message: cerr.Error()}
	default:
		rep = conf.Finish()
		if rep.Verdict == checker.Violated && rep.Err != nil {
			cerr = rep.Err // a violation found at the end (an invariant)
		} else if rep.Verdict != checker.Holds {
			mark = &picture.Mark{Index: -1, Message: finishSummary(rep), Label: rep.Verdict.String()}
		}
		if cerr != nil {
			mark = &picture.Mark{Index: min(cerr.Index, n), Rule: ruleName(cerr), Message: cerr.Error()}
		}
	}
	st.writeOutputs(mark, "no output file written, no linearizability check")
	files := st.files
	var lr *lin.Result
	if f.lin && !st.interrupted {
		if st.linTooLong {
			r := lin.TooLong(st.total, st.linLimit)
			lr = &r
		} else {
			opt := lin.Options{Budget: f.linBudget, Complete: cerr == nil && limit == "" && rep != nil && len(rep.NeverCompleted) == 0,
				HTML: f.linHTML, Inputs: []string{file}}
			r, err := runLinearizability(ctx, h, st.linEvents, opt)
			if err != nil {
				return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s: linearizability: %w", file, err))
			}
			lr = &r
			if f.linHTML != "" && r.HTMLError != "" {
				st.outErrs = append(st.outErrs, fmt.Errorf("--lin-html %s: %s", f.linHTML, r.HTMLError))
			}
		}
		st.linEvents = nil
		if files["html"] != "" {
			if err := st.tl.linkLin(f.html, file, mark, lr.HTML); err != nil {
				st.outErrs = append(st.outErrs, fmt.Errorf("--html: %w", err))
			}
		}
	}
	code = cli.ExitHolds
	switch {
	case cerr != nil || (rep != nil && rep.Verdict == checker.Violated):
		code = cli.ExitViolated
	case limit != "" || rep.Verdict == checker.Unknown:
		code = cli.ExitUnknown
	}
	if lr != nil {
		switch {
		case lr.Verdict == checker.Violated:
			code = cli.ExitViolated
		case lr.Verdict == checker.Unknown && code == cli.ExitHolds:
			code = cli.ExitUnknown
		}
	}
	code = st.exitCode(code)
	defer st.printOutErrs(stderr)
	if f.json {
		printCheckJSON(stdout, file, h, n, st.line, cerr, rep, st.recent, lr, files, limit, st.outErrs)
		return code
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	who := executorOf(h)
	switch {
	case cerr != nil:
		where := fmt.Sprintf("event %d", n+1)
		if st.line > 0 {
			where += fmt.Sprintf(" (line %d)", st.line)
		}
		fmt.Fprintf(bw, "%s: VIOLATION at %s, in a trace of %s\n", cli.Term(file), where, who)
		printViolation(bw, cerr, st.recent, n)
	case limit != "":
		fmt.Fprintf(bw, "%s: the first %d events of %s are enabled rules of the model; then the checker stopped at one of its limits\n", cli.Term(file), n, who)
		fmt.Fprintf(bw, "verdict: unknown (%s)\n", cli.Term(limit))
	default:
		fmt.Fprintf(bw, "%s: %d events of %s: every event is an enabled rule of the model\n", cli.Term(file), rep.Events, who)
		printFinish(bw, rep)
	}
	if st.interrupted {
		fmt.Fprintf(bw, "interrupted after %d events\n", st.total)
	}
	if lr != nil {
		for _, l := range strings.Split(strings.TrimRight(lr.Summary(), "\n"), "\n") {
			fmt.Fprintln(bw, cli.Term(l))
		}
	}
	st.printFiles(bw)
	if cerr != nil {
		st.suggest(bw, true)
	}
	return code
}

// checkSoftMemory is the soft memory limit of verify check and replay (see
// runtime/debug.SetMemoryLimit); GOMEMLIMIT overrides it.
const checkSoftMemory = 64 << 20

// softMemoryLimit sets checkSoftMemory unless GOMEMLIMIT is set. check and
// replay stream: their live heap is the checker's tables (about 14 bytes
// per task id) and, with --linearizability, the events kept. A soft limit
// makes the collector run before garbage doubles that, rather than after.
func softMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(checkSoftMemory)
	}
}

// checkInterrupted reports a check stopped by SIGINT or SIGTERM before a
// verdict: how far it got, and exit 3.
func checkInterrupted(stdout, stderr io.Writer, f *checkFlags, file string, h *traces.Header, n int) int {
	fmt.Fprintf(stderr, "verify check: interrupted after %d events; no verdict\n", n)
	if f.json {
		out := checkJSON{traceJSON: newTraceJSON(file, h, checker.Unknown.String(), n), LostWakeups: []int64{}, NeverCompleted: []int64{}, Interrupted: true}
		cli.PrintJSON(stdout, out, false)
		return cli.ExitUnknown
	}
	if h == nil {
		fmt.Fprintf(stdout, "%s: interrupted before the header was read\nverdict: unknown (interrupted)\n", cli.Term(file))
		return cli.ExitUnknown
	}
	fmt.Fprintf(stdout, "%s: interrupted after %d events of %s: every event read so far is an enabled rule of the model\nverdict: unknown (interrupted)\n",
		cli.Term(file), n, executorOf(*h))
	return cli.ExitUnknown
}

// runLinearizability runs the linearizability check so that neither its
// budget nor an interrupt can be overrun: the check stops itself at the
// budget, and if it has not returned a second later (or at once, on
// SIGINT/SIGTERM) the command goes on with an Unknown verdict without it.
func runLinearizability(ctx context.Context, h traces.Header, events []traces.Event, opt lin.Options) (lin.Result, error) {
	type result struct {
		r   lin.Result
		err error
	}
	ch := make(chan result, 1)
	go func() {
		r, err := lin.Check(h, events, opt)
		ch <- result{r, err}
	}()
	budget := opt.Budget
	if budget <= 0 {
		budget = lin.DefaultBudget
	}
	t := time.NewTimer(budget + time.Second)
	defer t.Stop()
	unknown := func(why string) lin.Result {
		return lin.Result{Verdict: checker.Unknown, Checks: []lin.SpecCheck{{Spec: "history", Verdict: checker.Unknown, Detail: why}}}
	}
	select {
	case r := <-ch:
		return r.r, r.err
	case <-ctx.Done():
		return unknown("interrupted"), nil
	case <-t.C:
		return unknown(fmt.Sprintf("the time limit of %v (--lin-budget) was spent; the check was stopped", budget)), nil
	}
}

// distinctOutputs refuses two output flags naming the same file.
func distinctOutputs(outs map[string]string) error {
	seen := map[string]string{}
	for _, flag := range []string{"--html", "--chrome", "--lin-html", "--out"} {
		name := outs[flag]
		if name == "" {
			continue
		}
		abs, _ := filepath.Abs(name)
		if other, dup := seen[abs]; dup {
			return fmt.Errorf("%s and %s name the same file %s", other, flag, cli.Term(name))
		}
		seen[abs] = flag
	}
	return nil
}

// nonEmpty is s, or def when s is empty, for a terminal: a trace's string
// (an executor's name, a policy) passes through cli.Term.
func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return cli.Term(s)
}

// printViolation prints the violation, the state before it as lanes, and
// the events that led to it.
func printViolation(w io.Writer, cerr *conform.Error, recent *ring, at int) {
	if cerr.Rule != 0 {
		fmt.Fprintf(w, "  rule:    %s\n", cerr.Rule)
	}
	fmt.Fprintf(w, "  what:    %s\n", cli.Term(cerr.Error()))
	if cerr.Premise != "" {
		fmt.Fprintf(w, "  premise: %s fails\n", cli.Term(strings.TrimSuffix(cerr.Premise, " fails")))
	}
	if cerr.Reason != "" {
		fmt.Fprintf(w, "  instead: %s\n", cli.Term(cerr.Reason))
	}
	if cerr.State != "" {
		fmt.Fprintln(w, "state before the event:")
		lines := strings.Split(strings.TrimRight(cerr.State, "\n"), "\n")
		for i, l := range lines {
			if i == 200 {
				fmt.Fprintf(w, "  … (%d more lines)\n", len(lines)-i)
				break
			}
			fmt.Fprintf(w, "  %s\n", cli.Term(l))
		}
	}
	fmt.Fprintln(w, "events before it:")
	recent.each(func(i int, e traces.Event) {
		prefix := "   "
		if i == at {
			prefix = "-> "
		}
		fmt.Fprintf(w, "  %s%6d  %s\n", prefix, i+1, cli.ShortEvent(e))
	})
}

func finishSummary(rep *conform.Report) string {
	var parts []string
	if len(rep.LostWakeups) > 0 {
		parts = append(parts, fmt.Sprintf("lost wakeups (woken, never polled again, not done): tasks %s", taskList(rep.LostWakeups)))
	}
	if len(rep.NeverCompleted) > 0 {
		parts = append(parts, fmt.Sprintf("never completed: tasks %s", taskList(rep.NeverCompleted)))
	}
	if len(parts) == 0 {
		return "the end of the trace violates the model"
	}
	return strings.Join(parts, "; ")
}

func printFinish(w io.Writer, rep *conform.Report) {
	fmt.Fprintf(w, "verdict: %s", rep.Verdict)
	if rep.Verdict == checker.Unknown {
		fmt.Fprint(w, " (every event conforms, but a finite trace cannot tell a task that would never finish from one that had not finished yet)")
	}
	fmt.Fprintln(w)
	for _, l := range strings.Split(rep.Summary(), "\n") {
		fmt.Fprintf(w, "  %s\n", cli.Term(l))
	}
}

func taskList(ts []int64) string {
	if len(ts) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, t := range ts {
		if i == 20 {
			fmt.Fprintf(&b, " … (%d in all)", len(ts))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "t%d", t)
	}
	return b.String()
}

// traceJSON opens check's --json object, full or partial: the schema, the
// trace, its verdict, what its header names and how many events were read.
type traceJSON struct {
	Schema   int    `json:"schema"`
	File     string `json:"file"`
	Verdict  string `json:"verdict"`
	Executor string `json:"executor"`
	Policy   string `json:"policy"`
	Workers  int    `json:"workers"`
	Events   int    `json:"events"`
}

// newTraceJSON fills a traceJSON; h is nil when no header was read.
func newTraceJSON(file string, h *traces.Header, verdict string, events int) traceJSON {
	t := traceJSON{Schema: cli.JSONSchema, File: file, Verdict: verdict, Events: events}
	if h != nil {
		t.Executor, t.Policy, t.Workers = h.Executor, h.Policy, h.Workers
	}
	return t
}

type checkJSON struct {
	traceJSON
	Violation      *violationJSON    `json:"violation,omitempty"`
	LostWakeups    []int64           `json:"lost_wakeups"`
	NeverCompleted []int64           `json:"never_completed"`
	MaxOtherPolls  int               `json:"max_other_polls"`
	MaxDelay       uint64            `json:"max_delay"`
	Linearizable   string            `json:"linearizability,omitempty"`
	Files          map[string]string `json:"files,omitempty"`
	Error          string            `json:"error,omitempty"`
	Limit          string            `json:"limit,omitempty"`       // a limit of the checker that stopped it (verdict unknown)
	Interrupted    bool              `json:"interrupted,omitempty"` // SIGINT or SIGTERM stopped it
	OutputErrors   []string          `json:"output_errors,omitempty"`
	*ReportCountsJSON
}

type violationJSON struct {
	Index   int      `json:"index"` // from 0
	Number  int      `json:"event"` // from 1, as messages count`
	Line    int      `json:"line"`
	Rule    string   `json:"rule"`
	Premise string   `json:"premise"`
	Reason  string   `json:"reason,omitempty"`
	Message string   `json:"message"`
	Event   string   `json:"text"`
	State   string   `json:"state"`
	Before  []string `json:"before"`
}

// newViolationJSON describes cerr, found at event index at (from 0) on
// line, with the events before it that recent still holds.
func newViolationJSON(cerr *conform.Error, at, line int, recent *ring) *violationJSON {
	v := &violationJSON{Index: at, Number: at + 1, Line: line, Rule: ruleName(cerr), Premise: cerr.Premise, Reason: cerr.Reason, Message: cerr.Error(), Event: traces.FormatEvent(cerr.Event), State: cerr.State, Before: []string{}}
	recent.each(func(i int, e traces.Event) {
		if i < at {
			v.Before = append(v.Before, traces.FormatEvent(e))
		}
	})
	return v
}

func printCheckJSON(w io.Writer, file string, h traces.Header, n, line int, cerr *conform.Error, rep *conform.Report, recent *ring, lr *lin.Result, files map[string]string, limit string, outErrs []error) {
	out := checkJSON{traceJSON: newTraceJSON(file, &h, "", n), LostWakeups: []int64{}, NeverCompleted: []int64{}, Files: files, Limit: limit}
	for _, err := range outErrs {
		out.OutputErrors = append(out.OutputErrors, err.Error())
	}
	if cerr != nil {
		out.Verdict = checker.Violated.String()
		out.Violation = newViolationJSON(cerr, n, line, recent)
	} else if limit != "" {
		out.Verdict = checker.Unknown.String()
	} else {
		out.Verdict = rep.Verdict.String()
		out.Events = rep.Events
		out.LostWakeups = append(out.LostWakeups, rep.LostWakeups...)
		out.NeverCompleted = append(out.NeverCompleted, rep.NeverCompleted...)
		out.MaxOtherPolls, out.MaxDelay = rep.MaxOtherPolls, rep.MaxDelay
		out.ReportCountsJSON = reportCounts(rep)
	}
	if lr != nil {
		out.Linearizable = lr.Verdict.String()
		if lr.Verdict == checker.Violated {
			out.Verdict = checker.Violated.String()
		}
	}
	cli.PrintJSON(w, out, false)
}

// badInput reports an input error: on stderr, and as JSON on stdout with
// --json. The error names the file and line (traces.Error does).
func badInput(stdout, stderr io.Writer, asJSON bool, file string, err error) int {
	msg := err.Error()
	if !strings.Contains(msg, file) {
		msg = file + ": " + msg
	}
	fmt.Fprintf(stderr, "verify check: bad input: %s\n", cli.Term(msg))
	if asJSON {
		cli.PrintJSON(stdout, checkJSON{traceJSON: newTraceJSON(file, nil, "bad-input", 0), Error: msg}, false)
	}
	return cli.ExitUsage
}

// traceSource reads events from either form of a trace.
type traceSource interface {
	Header() traces.Header
	Next() (traces.Event, error)
	Line() int
}

// openTrace reads the header of a trace in either form: JSON lines when
// the first non-blank byte is '{', the text form otherwise. Both stream.
func openTrace(r io.Reader, name string) (traceSource, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b, err := br.Peek(1)
		if err != nil {
			if err == io.EOF {
				return nil, &traces.Error{File: name, Err: fmt.Errorf("%w: empty trace", traces.ErrMissingHeader)}
			}
			return nil, err
		}
		if c := b[0]; c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			br.ReadByte()
			continue
		}
		if b[0] == '{' {
			return traces.NewReader(br, name)
		}
		break
	}
	return traces.NewTextReader(br, name)
}

// ring keeps the last events with their indexes. It grows with the
// events pushed, up to its size, so that a large size asked for costs
// nothing on a short trace.
type ring struct {
	idx    []int
	events []traces.Event
	size   int
	n      int
}

func newRing(size int) *ring {
	return &ring{size: max(size, 1)}
}

func (r *ring) push(i int, e traces.Event) {
	if len(r.events) < r.size {
		r.idx, r.events = append(r.idx, i), append(r.events, e)
		r.n++
		return
	}
	k := r.n % r.size
	r.idx[k], r.events[k] = i, e
	r.n++
}

func (r *ring) each(f func(int, traces.Event)) {
	start := max(0, r.n-len(r.events))
	for j := start; j < r.n; j++ {
		k := j % r.size
		f(r.idx[k], r.events[k])
	}
}

// checkGoTrace is verify check --go-trace.
func checkGoTrace(ctx context.Context, file string, f *checkFlags, stdout, stderr io.Writer) int {
	in, closeIn, err := cli.OpenInput(ctx, file)
	if err != nil {
		if cli.IsInterrupted(err) {
			return checkInterrupted(stdout, stderr, f, file, nil, 0)
		}
		return badInput(stdout, stderr, f.json, file, err)
	}
	defer closeIn()
	gt, err := traces.ReadGoTrace(in)
	if err != nil {
		if cli.IsInterrupted(err) || ctx.Err() != nil {
			return checkInterrupted(stdout, stderr, f, file, nil, 0)
		}
		return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s: %w", file, err))
	}
	rep := gotrace.Check(gt, gotrace.Options{StuckAfter: f.stuckAfter})
	files := map[string]string{}
	var outErrs []error
	if f.html != "" {
		var mark *picture.Mark
		if len(rep.Violations) > 0 {
			v := rep.Violations[0]
			mark = &picture.Mark{Index: v.Index, Message: v.Msg}
		}
		if err := cli.WriteFile(f.html, func(w io.Writer) error { return picture.WriteHTML(w, gt.Header, gt.Events, mark) }); err != nil {
			outErrs = append(outErrs, fmt.Errorf("--html: %w", err))
		} else {
			files["html"] = f.html
		}
	}
	if f.chrome != "" {
		if err := cli.WriteFile(f.chrome, func(w io.Writer) error { return picture.WriteChromeTrace(w, gt.Header, gt.Events) }); err != nil {
			outErrs = append(outErrs, fmt.Errorf("--chrome: %w", err))
		} else {
			files["chrome"] = f.chrome
		}
	}
	code := cli.ExitHolds
	if rep.Verdict == checker.Violated {
		code = cli.ExitViolated
	}
	if len(outErrs) > 0 && code != cli.ExitViolated {
		code = cli.ExitUsage
	}
	defer func() {
		for _, err := range outErrs {
			fmt.Fprintf(stderr, "verify check: %s\n", cli.Term(err.Error()))
		}
	}()
	if f.json {
		type delayJSON struct {
			Goroutine    int64  `json:"goroutine"`
			Waits        int    `json:"waits"`
			MaxDelayNS   int64  `json:"max_delay_ns"`
			MeanDelayNS  int64  `json:"mean_delay_ns"`
			MaxOtherRuns int    `json:"max_other_runs"`
			Where        string `json:"where,omitempty"`
		}
		conv := func(ds []gotrace.Delay) []delayJSON {
			out := []delayJSON{}
			for _, d := range ds {
				out = append(out, delayJSON{d.Goroutine, d.Waits, int64(d.MaxDelay), int64(d.MeanDelay), d.MaxOtherRuns, cmp.Or(d.Where, d.Start)})
			}
			return out
		}
		var viol []string
		for _, v := range rep.Violations {
			viol = append(viol, v.Msg)
		}
		var left []int64
		for _, g := range rep.LeftRunnable {
			left = append(left, g.Goroutine)
		}
		cli.PrintJSON(stdout, map[string]any{
			"schema": cli.JSONSchema, "file": file, "verdict": rep.Verdict.String(), "events": rep.Events, "goroutines": rep.Goroutines,
			"violations": viol, "left_runnable": left, "max_delay_ns": int64(rep.MaxDelay), "max_other_runs": rep.MaxOtherRuns,
			"worst_by_time": conv(rep.WorstByTime), "worst_by_runs": conv(rep.WorstByRuns), "cannot_show": rep.CannotShow, "files": files,
		}, false)
		return code
	}
	fmt.Fprintf(stdout, "%s: ", cli.Term(file))
	var text strings.Builder
	rep.WriteText(&text)
	for _, l := range strings.SplitAfter(text.String(), "\n") {
		if l != "" {
			fmt.Fprint(stdout, cli.Term(strings.TrimSuffix(l, "\n"))+"\n")
		}
	}
	if files["html"] != "" {
		fmt.Fprintf(stdout, "timeline: %s\n", cli.Term(files["html"]))
	}
	if files["chrome"] != "" {
		fmt.Fprintf(stdout, "Chrome trace (open in ui.perfetto.dev): %s\n", cli.Term(files["chrome"]))
	}
	return code
}

// maxLast bounds check --last: the events listed before a violation.
const maxLast = 10_000

// checkFlagSpecs is the table of verify check's numeric flags.
func checkFlagSpecs(f *checkFlags) []cli.FlagSpec {
	lin := cli.OnlyWith(func() bool { return f.lin }, "with --linearizability")
	return []cli.FlagSpec{
		{Name: "last", Min: 0, Max: maxLast},
		{Name: "lin-budget", Min: int64(time.Millisecond), Max: cli.MaxDuration, Applies: lin},
		{Name: "lin-html", Applies: lin},
		{Name: "stuck-after", Min: 1, Max: cli.MaxDuration, Applies: cli.OnlyWith(func() bool { return f.goTrace }, "with --go-trace")},
		{Name: "linearizability", Applies: cli.OnlyWith(func() bool { return !f.goTrace }, "on an execspec trace (not with --go-trace)")},
	}
}
