package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

func init() {
	register(command{
		name:    "check",
		summary: "check a recorded trace against the model (conformance)",
		run:     runCheck,
	})
}

type checkFlags struct {
	html, chrome string
	goTrace      bool
	json         bool
	last         int
	lin          bool
	linBudget    time.Duration
	stuckAfter   time.Duration
}

func checkFlagSet(stderr io.Writer, f *checkFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("verify check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.html, "html", "", "write an HTML timeline of the trace, with the violation marked, to `FILE`")
	fs.StringVar(&f.chrome, "chrome", "", "write the trace in the Chrome trace-event format (Perfetto, chrome://tracing) to `FILE`")
	fs.BoolVar(&f.goTrace, "go-trace", false, "FILE is a Go runtime execution trace (runtime/trace), not an execspec trace")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of text")
	fs.IntVar(&f.last, "last", 10, "how many events before the violation to print")
	fs.BoolVar(&f.lin, "linearizability", false, "also check the linearizability of the trace's queue operations (call/ret ticks)")
	fs.DurationVar(&f.linBudget, "lin-budget", checker.LinDefaultBudget, "time budget of the linearizability check (then unknown)")
	fs.DurationVar(&f.stuckAfter, "stuck-after", time.Second, "with --go-trace: a goroutine runnable this long at the end of the trace, never run, is a finding")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: verify check [flags] FILE")
		fmt.Fprintln(stderr, "\nReplays the trace in FILE through the model: every event must be an enabled")
		fmt.Fprintln(stderr, "instance of its rule in the current state. The first event that is not is")
		fmt.Fprintln(stderr, "reported with the rule, the premise that failed, the state of every queue and")
		fmt.Fprintln(stderr, "worker, and the events before it. At the end: lost wakeups, tasks never")
		fmt.Fprintln(stderr, "completed, and the fairness figures. FILE is JSON lines (docs/trace-format.md)")
		fmt.Fprintln(stderr, "or the text form; - reads standard input.")
		fmt.Fprintln(stderr, "\nExamples:")
		fmt.Fprintln(stderr, "  verify check run.jsonl")
		fmt.Fprintln(stderr, "  verify check --html run.html run.jsonl")
		fmt.Fprintln(stderr, "  verify check --go-trace trace.out")
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nExit codes: 0 conforms, 1 violation, 2 bad input or usage, 3 unknown.")
	}
	return fs
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f checkFlags
	fs := checkFlagSet(stderr, &f)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "verify check: want one trace FILE (see verify check -h)")
		return exitUsage
	}
	file := fs.Arg(0)
	if f.goTrace {
		return checkGoTrace(file, &f, stdout, stderr)
	}
	in, closeIn, err := openInput(file)
	if err != nil {
		return badInput(stdout, stderr, f.json, file, err)
	}
	defer closeIn()
	src, err := openTrace(in, file)
	if err != nil {
		return badInput(stdout, stderr, f.json, file, err)
	}
	h := src.Header()
	conf, err := checker.NewConformance(h)
	if err != nil {
		return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s:1: %w", file, err))
	}
	keepAll := f.chrome != "" || f.lin
	tl := newCheckTimeline(f.html, h)
	var (
		all    []traces.Event
		recent = newRing(max(f.last, 0) + 1)
		n      int
		cerr   *checker.ConformanceError
		line   int
	)
	for {
		if n%4096 == 0 && ctx.Err() != nil {
			fmt.Fprintf(stderr, "verify check: interrupted after %d events; no verdict\n", n)
			return exitUnknown
		}
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return badInput(stdout, stderr, f.json, file, err)
		}
		if keepAll {
			all = append(all, e)
		}
		tl.add(e)
		recent.push(n, e)
		if err := conf.Step(e); err != nil {
			if !errors.As(err, &cerr) {
				return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s:%d: %w", file, src.Line(), err))
			}
			line = src.Line()
			break
		}
		n++
	}
	if cerr != nil && (f.lin || f.html != "" || f.chrome != "") {
		tl.holdAfter(n)
		// The pictures and the linearizability check see the whole trace,
		// not only the events up to the violation.
		for {
			e, err := src.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return badInput(stdout, stderr, f.json, file, err)
			}
			if keepAll {
				all = append(all, e)
			}
			tl.add(e)
		}
	}
	var (
		rep   *checker.ConformanceReport
		files = map[string]string{}
		mark  *traces.Mark
	)
	if cerr != nil {
		mark = &traces.Mark{Index: n, Rule: cerr.Rule.String(), Message: cerr.Error()}
	} else {
		rep = conf.Finish()
		if rep.Verdict == checker.Violated && rep.Err != nil {
			cerr = rep.Err // a violation found at the end (an invariant)
		} else if rep.Verdict != checker.Holds {
			mark = &traces.Mark{Index: -1, Message: finishSummary(rep), Label: rep.Verdict.String()}
		}
		if cerr != nil {
			mark = &traces.Mark{Index: min(cerr.Index, n), Rule: cerr.Rule.String(), Message: cerr.Error()}
		}
	}
	if f.html != "" {
		if err := tl.write(f.html, file, mark); err != nil {
			fmt.Fprintf(stderr, "verify check: %v\n", err)
			return exitUsage
		}
		files["html"] = f.html
	}
	if f.chrome != "" {
		if err := writeFile(f.chrome, func(w io.Writer) error { return traces.WriteChromeTrace(w, h, all) }); err != nil {
			fmt.Fprintf(stderr, "verify check: %v\n", err)
			return exitUsage
		}
		files["chrome"] = f.chrome
	}
	var lin *checker.LinResult
	if f.lin {
		opt := checker.LinOptions{Budget: f.linBudget, Complete: cerr == nil && rep != nil && len(rep.NeverCompleted) == 0}
		if file != "-" {
			opt.HTML = strings.TrimSuffix(file, filepath.Ext(file)) + ".lin.html"
		}
		r, err := checker.CheckLinearizability(h, all, opt)
		if err != nil {
			return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s: linearizability: %w", file, err))
		}
		lin = &r
		if err := tl.linkLin(f.html, file, mark, r.HTML); err != nil {
			fmt.Fprintf(stderr, "verify check: %v\n", err)
		}
	}
	code := exitHolds
	switch {
	case cerr != nil || (rep != nil && rep.Verdict == checker.Violated):
		code = exitViolated
	case rep.Verdict == checker.Unknown:
		code = exitUnknown
	}
	if lin != nil {
		switch {
		case lin.Verdict == checker.Violated:
			code = exitViolated
		case lin.Verdict == checker.Unknown && code == exitHolds:
			code = exitUnknown
		}
	}
	if f.json {
		printCheckJSON(stdout, file, h, n, line, cerr, rep, recent, lin, files)
		return code
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	if cerr != nil {
		where := fmt.Sprintf("event %d", n+1)
		if line > 0 {
			where += fmt.Sprintf(" (line %d)", line)
		}
		fmt.Fprintf(bw, "%s: VIOLATION at %s, in a trace of %s (%d workers, policy %s)\n", file, where, nonEmpty(h.Executor, "an unnamed executor"), h.Workers, nonEmpty(h.Policy, "worksteal"))
		printViolation(bw, cerr, recent, n)
	} else {
		fmt.Fprintf(bw, "%s: %d events of %s (%d workers, policy %s): every event is an enabled rule of the model\n", file, rep.Events, nonEmpty(h.Executor, "an unnamed executor"), h.Workers, nonEmpty(h.Policy, "worksteal"))
		printFinish(bw, rep)
	}
	if lin != nil {
		bw.WriteString(lin.Summary())
	}
	for _, k := range []string{"html", "chrome"} {
		if files[k] != "" {
			fmt.Fprintf(bw, "%s: %s\n", map[string]string{"html": "timeline", "chrome": "Chrome trace (open in ui.perfetto.dev)"}[k], files[k])
		}
	}
	if cerr != nil && files["html"] == "" && file != "-" {
		fmt.Fprintf(bw, "see it: verify check --html %s.html %s; step through it: verify replay %s\n", strings.TrimSuffix(file, filepath.Ext(file)), file, file)
	}
	return code
}

// shortEvent is the text form of e with a long detail cut, for listings
// (the trace file keeps it whole).
func shortEvent(e traces.Event) string {
	const maxDetail = 60
	if r := []rune(e.Detail); len(r) > maxDetail {
		e.Detail = string(r[:maxDetail]) + "…"
	}
	return traces.FormatEvent(e)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// printViolation prints the violation, the state before it as lanes, and
// the events that led to it.
func printViolation(w io.Writer, cerr *checker.ConformanceError, recent *ring, at int) {
	if cerr.Rule != 0 {
		fmt.Fprintf(w, "  rule:    %s\n", cerr.Rule)
	}
	fmt.Fprintf(w, "  what:    %s\n", cerr.Error())
	if cerr.Premise != "" {
		fmt.Fprintf(w, "  premise: %s fails\n", strings.TrimSuffix(cerr.Premise, " fails"))
	}
	if cerr.Reason != "" {
		fmt.Fprintf(w, "  instead: %s\n", cerr.Reason)
	}
	if cerr.State != "" {
		fmt.Fprintln(w, "state before the event:")
		for _, l := range strings.Split(strings.TrimRight(cerr.State, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintln(w, "events before it:")
	recent.each(func(i int, e traces.Event) {
		prefix := "   "
		if i == at {
			prefix = "-> "
		}
		fmt.Fprintf(w, "  %s%6d  %s\n", prefix, i+1, shortEvent(e))
	})
}

func finishSummary(rep *checker.ConformanceReport) string {
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

func printFinish(w io.Writer, rep *checker.ConformanceReport) {
	fmt.Fprintf(w, "verdict: %s", rep.Verdict)
	if rep.Verdict == checker.Unknown {
		fmt.Fprint(w, " (every event conforms, but a finite trace cannot tell a task that would never finish from one that had not finished yet)")
	}
	fmt.Fprintln(w)
	for _, l := range strings.Split(rep.Summary(), "\n") {
		fmt.Fprintf(w, "  %s\n", l)
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

type checkJSON struct {
	File           string            `json:"file"`
	Verdict        string            `json:"verdict"`
	Executor       string            `json:"executor"`
	Policy         string            `json:"policy"`
	Workers        int               `json:"workers"`
	Events         int               `json:"events"`
	Violation      *violationJSON    `json:"violation,omitempty"`
	LostWakeups    []int64           `json:"lost_wakeups"`
	NeverCompleted []int64           `json:"never_completed"`
	MaxOtherPolls  int               `json:"max_other_polls"`
	MaxDelay       uint64            `json:"max_delay"`
	Linearizable   string            `json:"linearizability,omitempty"`
	Files          map[string]string `json:"files,omitempty"`
	Error          string            `json:"error,omitempty"`
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

func printCheckJSON(w io.Writer, file string, h traces.Header, n, line int, cerr *checker.ConformanceError, rep *checker.ConformanceReport, recent *ring, lin *checker.LinResult, files map[string]string) {
	out := checkJSON{File: file, Executor: h.Executor, Policy: h.Policy, Workers: h.Workers, Events: n, LostWakeups: []int64{}, NeverCompleted: []int64{}, Files: files}
	if cerr != nil {
		out.Verdict = checker.Violated.String()
		v := &violationJSON{Index: n, Number: n + 1, Line: line, Rule: cerr.Rule.String(), Premise: cerr.Premise, Reason: cerr.Reason, Message: cerr.Error(), Event: traces.FormatEvent(cerr.Event), State: cerr.State, Before: []string{}}
		recent.each(func(i int, e traces.Event) {
			if i < n {
				v.Before = append(v.Before, traces.FormatEvent(e))
			}
		})
		out.Violation = v
	} else {
		out.Verdict = rep.Verdict.String()
		out.Events = rep.Events
		out.LostWakeups = append(out.LostWakeups, rep.LostWakeups...)
		out.NeverCompleted = append(out.NeverCompleted, rep.NeverCompleted...)
		out.MaxOtherPolls, out.MaxDelay = rep.MaxOtherPolls, rep.MaxDelay
	}
	if lin != nil {
		out.Linearizable = lin.Verdict.String()
		if lin.Verdict == checker.Violated {
			out.Verdict = checker.Violated.String()
		}
	}
	enc := json.NewEncoder(w)
	enc.Encode(out)
}

// badInput reports an input error: on stderr, and as JSON on stdout with
// --json. The error names the file and line (traces.Error does).
func badInput(stdout, stderr io.Writer, asJSON bool, file string, err error) int {
	msg := err.Error()
	if !strings.Contains(msg, file) {
		msg = file + ": " + msg
	}
	fmt.Fprintf(stderr, "verify check: bad input: %s\n", msg)
	if asJSON {
		json.NewEncoder(stdout).Encode(checkJSON{File: file, Verdict: "bad-input", Error: msg})
	}
	return exitUsage
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

// openInput opens file, or standard input for "-".
func openInput(file string) (io.Reader, func(), error) {
	if file == "-" {
		return os.Stdin, func() {}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func writeFile(name string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return os.WriteFile(name, buf.Bytes(), 0o644)
}

// ring keeps the last events with their indexes.
type ring struct {
	idx    []int
	events []traces.Event
	n      int
}

func newRing(size int) *ring {
	return &ring{idx: make([]int, size), events: make([]traces.Event, size)}
}

func (r *ring) push(i int, e traces.Event) {
	k := r.n % len(r.events)
	r.idx[k], r.events[k] = i, e
	r.n++
}

func (r *ring) each(f func(int, traces.Event)) {
	start := max(0, r.n-len(r.events))
	for j := start; j < r.n; j++ {
		k := j % len(r.events)
		f(r.idx[k], r.events[k])
	}
}

// checkGoTrace is verify check --go-trace.
func checkGoTrace(file string, f *checkFlags, stdout, stderr io.Writer) int {
	in, closeIn, err := openInput(file)
	if err != nil {
		return badInput(stdout, stderr, f.json, file, err)
	}
	defer closeIn()
	gt, err := traces.ReadGoTrace(in)
	if err != nil {
		return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s: %w", file, err))
	}
	rep := checker.CheckGoTrace(gt, checker.GoTraceOptions{StuckAfter: f.stuckAfter})
	files := map[string]string{}
	if f.html != "" {
		var mark *traces.Mark
		if len(rep.Violations) > 0 {
			v := rep.Violations[0]
			mark = &traces.Mark{Index: v.Index, Message: v.Msg}
		}
		if err := writeFile(f.html, func(w io.Writer) error { return traces.WriteHTML(w, gt.Header, gt.Events, mark) }); err != nil {
			fmt.Fprintf(stderr, "verify check: %v\n", err)
			return exitUsage
		}
		files["html"] = f.html
	}
	if f.chrome != "" {
		if err := writeFile(f.chrome, func(w io.Writer) error { return traces.WriteChromeTrace(w, gt.Header, gt.Events) }); err != nil {
			fmt.Fprintf(stderr, "verify check: %v\n", err)
			return exitUsage
		}
		files["chrome"] = f.chrome
	}
	code := exitHolds
	if rep.Verdict == checker.Violated {
		code = exitViolated
	}
	if f.json {
		type delayJSON struct {
			Goroutine    int64  `json:"goroutine"`
			Waits        int    `json:"waits"`
			MaxDelayNS   int64  `json:"max_delay_ns"`
			MeanDelayNS  int64  `json:"mean_delay_ns"`
			MaxOtherRuns int    `json:"max_other_runs"`
			Where        string `json:"where,omitempty"`
		}
		conv := func(ds []checker.GoDelay) []delayJSON {
			out := []delayJSON{}
			for _, d := range ds {
				out = append(out, delayJSON{d.Goroutine, d.Waits, int64(d.MaxDelay), int64(d.MeanDelay), d.MaxOtherRuns, nonEmpty(d.Where, d.Start)})
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
		json.NewEncoder(stdout).Encode(map[string]any{
			"file": file, "verdict": rep.Verdict.String(), "events": rep.Events, "goroutines": rep.Goroutines,
			"violations": viol, "left_runnable": left, "max_delay_ns": int64(rep.MaxDelay), "max_other_runs": rep.MaxOtherRuns,
			"worst_by_time": conv(rep.WorstByTime), "worst_by_runs": conv(rep.WorstByRuns), "cannot_show": rep.CannotShow, "files": files,
		})
		return code
	}
	fmt.Fprintf(stdout, "%s: ", file)
	rep.WriteText(stdout)
	if files["html"] != "" {
		fmt.Fprintf(stdout, "timeline: %s\n", files["html"])
	}
	if files["chrome"] != "" {
		fmt.Fprintf(stdout, "Chrome trace (open in ui.perfetto.dev): %s\n", files["chrome"])
	}
	return code
}
