package check

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/partial"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// partialNote is what verify replay says of a partially observed trace.
const partialNote = "the trace is partially observed (its header lists unobserved: %s): the model's state — which queue holds which task — is not determined by it, so it cannot be stepped through; verify check checks what it shows and names what it cannot"

// checkPartial is verify check on a partially observed trace (a header
// with a non-empty unobserved list): partial.Checker instead of the
// model replay, the same output files, exit codes and flags but
// --linearizability, which needs every queue operation.
func checkPartial(ctx context.Context, file string, src traceSource, h traces.Header, f *checkFlags, stdout, stderr io.Writer) int {
	unobs := strings.Join(h.Unobserved, ", ")
	if f.lin {
		fmt.Fprintf(stderr, "verify check: --linearizability: %s lists unobserved: %s; the linearizability check needs every queue operation with its call and return\n", cli.Term(file), cli.Term(unobs))
		return cli.ExitUsage
	}
	pc, err := partial.New(h)
	if err != nil {
		return badInput(stdout, stderr, f.json, file, fmt.Errorf("%s:1: %w", file, err))
	}
	pc.SetFairnessBound(f.fairBound)
	st, code := streamCheck(ctx, file, src, h, f, pc, stdout, stderr)
	if st == nil {
		return code
	}
	defer st.abort()
	n, cerr := st.n, st.cerr
	if st.noVerdict() {
		return checkInterrupted(stdout, stderr, f, file, &h, n)
	}
	rep := pc.Finish()
	if cerr == nil && rep.Err != nil && rep.Err.Limit == "" {
		cerr = rep.Err // found at the end (the model's invariants)
	}
	var mark *picture.Mark
	switch {
	case cerr != nil && cerr.Limit == "":
		mark = &picture.Mark{Index: min(cerr.Index, n), Rule: ruleName(cerr), Message: cerr.Error()}
	case rep.Verdict != checker.Holds:
		msg := "tasks not DONE at the end"
		if rep.Err != nil {
			msg = rep.Err.Error()
		} else if len(rep.LostWakeups) > 0 {
			msg = "lost wakeups: tasks " + taskList(rep.LostWakeups)
		}
		mark = &picture.Mark{Index: -1, Message: msg, Label: rep.Verdict.String()}
	}
	st.writeOutputs(mark, "no output file written")
	files := st.files
	code = cli.ExitHolds
	switch rep.Verdict {
	case checker.Violated:
		code = cli.ExitViolated
	case checker.Unknown:
		code = cli.ExitUnknown
	}
	code = st.exitCode(code)
	defer st.printOutErrs(stderr)
	if f.json {
		printPartialJSON(stdout, file, h, n, st.line, rep, st.recent, files, st.outErrs)
		return code
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	who := executorOf(h)
	if rep.Verdict == checker.Violated {
		where := fmt.Sprintf("event %d", rep.Err.Index+1)
		if st.line > 0 {
			where += fmt.Sprintf(" (line %d)", st.line)
		}
		fmt.Fprintf(bw, "%s: VIOLATION at %s, in a partially observed trace of %s (unobserved: %s)\n", cli.Term(file), where, who, cli.Term(unobs))
		printViolation(bw, rep.Err, st.recent, rep.Err.Index)
	} else {
		fmt.Fprintf(bw, "%s: %d events of %s, partially observed (unobserved: %s)\n", cli.Term(file), rep.Events, who, cli.Term(unobs))
		fmt.Fprintf(bw, "verdict: %s", rep.Verdict)
		switch {
		case rep.Verdict == checker.Unknown && rep.Err == nil:
			fmt.Fprint(bw, " (every checked rule holds, but a finite trace cannot tell a task that would never finish from one that had not finished yet)")
		case rep.Verdict == checker.Holds:
			fmt.Fprintf(bw, " (for the %d rules checked; %d rules could not be checked, named below)", len(rep.Checked), len(rep.Unchecked))
		}
		fmt.Fprintln(bw)
	}
	for _, l := range strings.Split(rep.Summary(), "\n") {
		if rep.Verdict == checker.Violated && strings.HasPrefix(l, "violated: ") {
			continue
		}
		fmt.Fprintf(bw, "  %s\n", cli.Term(l))
	}
	if st.interrupted {
		fmt.Fprintf(bw, "interrupted after %d events\n", st.total)
	}
	st.printFiles(bw)
	if rep.Verdict == checker.Violated {
		st.suggest(bw, false)
	}
	return code
}

func ruleName(cerr *conform.Error) string {
	if cerr.Rule == 0 {
		return cerr.Premise
	}
	return cerr.Rule.String()
}

type partialDelayJSON struct {
	Waits             int    `json:"waits"`
	MaxTicks          uint64 `json:"max_ticks"`
	MaxTicksTask      int64  `json:"max_ticks_task"`
	MaxOtherPolls     uint64 `json:"max_other_polls"`
	MaxOtherPollsTask int64  `json:"max_other_polls_task"`
	StillWaiting      bool   `json:"still_waiting"`
	TimedWaits        int    `json:"timed_waits"`
	MaxTimeNS         int64  `json:"max_time_ns"`
	MaxTimeTask       int64  `json:"max_time_task"`
	MeanTimeNS        int64  `json:"mean_time_ns"`
}

func delayJSON(d partial.Delay) partialDelayJSON {
	return partialDelayJSON{d.Count, d.MaxTicks, d.MaxTicksTask, d.MaxOtherPolls, d.MaxOtherPollsTask, d.StillWaiting, d.Timed, d.MaxTime, d.MaxTimeTask, d.MeanTime()}
}

type partialJSON struct {
	traceJSON
	Partial        bool                `json:"partial"`
	Unobserved     []string            `json:"unobserved"`
	Checked        []string            `json:"checked"`
	Unchecked      []partial.Unchecked `json:"unchecked"`
	Replayed       bool                `json:"replayed"`
	Violation      *violationJSON      `json:"violation,omitempty"`
	Limit          string              `json:"limit,omitempty"`
	Tasks          int                 `json:"tasks"`
	Completed      int                 `json:"completed"`
	LostWakeups    []int64             `json:"lost_wakeups"`
	NeverCompleted []int64             `json:"never_completed"`
	Stopped        bool                `json:"stopped"`
	Abandoned      []partial.Abandoned `json:"abandoned"`
	Polls          int                 `json:"polls"`
	WorkerPolls    []int               `json:"worker_polls"`
	NoTaskWakes    int                 `json:"no_task_wakes"`
	LateWakes      int                 `json:"late_wakes"`
	SpuriousPolls  int                 `json:"spurious_polls"`
	WokenAtTake    int                 `json:"woken_at_take"`
	Failures       int                 `json:"failures"`
	SpawnDelay     partialDelayJSON    `json:"spawn_to_poll"`
	WakeDelay      partialDelayJSON    `json:"wake_to_poll"`
	Files          map[string]string   `json:"files,omitempty"`
	OutputErrors   []string            `json:"output_errors,omitempty"`
}

func printPartialJSON(w io.Writer, file string, h traces.Header, n, line int, rep *partial.Report, recent *ring, files map[string]string, outErrs []error) {
	out := partialJSON{
		traceJSON: newTraceJSON(file, &h, rep.Verdict.String(), rep.Events),
		Partial:   true, Unobserved: rep.Unobserved, Checked: rep.Checked, Unchecked: rep.Unchecked, Replayed: rep.Replayed,
		Tasks: rep.Tasks, Completed: rep.Completed,
		LostWakeups: append([]int64{}, rep.LostWakeups...), NeverCompleted: append([]int64{}, rep.NeverCompleted...),
		Stopped: rep.Stopped, Abandoned: append([]partial.Abandoned{}, rep.Abandoned...),
		Polls: rep.Polls, WorkerPolls: rep.WorkerPolls, NoTaskWakes: rep.NoTaskWakes, LateWakes: rep.LateWakes,
		SpuriousPolls: rep.SpuriousPolls, WokenAtTake: rep.WokenAtTake, Failures: rep.Failures,
		SpawnDelay: delayJSON(rep.SpawnDelay), WakeDelay: delayJSON(rep.WakeDelay), Files: files,
	}
	if out.Checked == nil {
		out.Checked = []string{}
	}
	for _, err := range outErrs {
		out.OutputErrors = append(out.OutputErrors, err.Error())
	}
	if cerr := rep.Err; cerr != nil && cerr.Limit != "" {
		out.Limit = cerr.Error()
	} else if cerr != nil {
		out.Violation = newViolationJSON(cerr, cerr.Index, line, recent)
	}
	cli.PrintJSON(w, out, false)
}
