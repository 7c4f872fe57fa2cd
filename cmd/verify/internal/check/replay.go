package check

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// Replay is verify replay: a trace stepped through against the model.
var Replay = cli.Command{
	Name:    "replay",
	Summary: "step through a trace against the model, forward and back, with the state of every queue, worker and task",
	Run:     runReplay,
}

// replayMaxFrames bounds the events kept for stepping back and forth in a
// terminal; a longer trace is stepped from --from on. replayShown bounds
// the tasks shown per queue and in the tasks line.
const (
	replayMaxFrames = 1 << 15
	replayShown     = 24
)

// replayHelp is what `verify replay -h` prints before the flags; replayExits, after them.
const replayHelp = `Usage: verify replay [flags] FILE

Replays the trace in FILE through the model and stops at the first event that
is not an enabled rule. In a terminal it steps a key at a time: → or space for
the next event, ← for the one before, Home and End, q to quit; each screen shows
the event, the rule it reports with its premise and conclusion, and the state
after it (the global queue, each worker with what it polls and its local queue,
every task's state). Piped (or with --print) it prints each event and what it
changed, and the whole state at the start and at the violation.
`

const replayExits = `Exit codes: 0 conforms, 1 violation, 2 bad input or usage, 3 unknown (tasks not DONE at the end).
`

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("verify replay", stderr, replayHelp, replayExits)
	html := fs.String("html", "", "also write an HTML timeline to `FILE`, stepped in the browser with ← →, opened at the violation")
	from := fs.Int("from", 1, "show events only from event `N` on, counting from 1 (the events before are still replayed)")
	printOnly := fs.Bool("print", false, "print the replay instead of stepping through it, even in a terminal")
	if code, ok := cli.ParseFlags(fs, args); !ok {
		return code
	}
	if err := cli.ValidateFlags(fs, replayFlagSpecs()); err != nil {
		return cli.FlagError(stderr, "replay", err)
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "verify replay: want one trace FILE (see %s replay -h)\n", cli.SelfCommand())
		return cli.ExitUsage
	}
	softMemoryLimit()
	file := fs.Arg(0)
	interactive := !*printOnly && file != "-" && cli.IsTerminal(stdout) && cli.IsTerminal(os.Stdin)
	in, closeIn, err := cli.OpenInput(ctx, file)
	if err != nil {
		return replayBad(stderr, file, err)
	}
	defer closeIn()
	src, err := openTrace(in, file)
	if err != nil {
		return replayBad(stderr, file, err)
	}
	h := src.Header()
	if len(h.Unobserved) > 0 {
		fmt.Fprintf(stderr, "verify replay: cannot replay %s: "+partialNote+"\n", traces.Printable(file), traces.Printable(strings.Join(h.Unobserved, ", ")))
		return cli.ExitUsage
	}
	conf, err := conform.New(h)
	if err != nil {
		return replayBad(stderr, file, fmt.Errorf("%s:1: %w", file, err))
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	title := fmt.Sprintf("replaying %s: %s, %d workers, policy %s", traces.Printable(file), traces.Printable(nonEmpty(h.Executor, "an unnamed executor")), h.Workers, traces.Printable(nonEmpty(h.Policy, "worksteal")))
	var (
		tl     *picture.Timeline
		cerr   *conform.Error
		n      int
		frames = frameRing{max: replayMaxFrames}
		// taskShown is the state last printed of each task not DONE.
		taskShown = map[int64]string{}
		lanes     = conf.BoundedLanes(replayShown)
		initial   = lanes
	)
	if *html != "" {
		tl = picture.NewTimeline(h)
	}
	if !interactive {
		fmt.Fprintln(w, title)
		if *from <= 1 {
			fmt.Fprintln(w, "initial state:")
			printLanesBounded(w, lanes)
		}
	}
	for ; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			w.Flush()
			fmt.Fprintf(stderr, "verify replay: interrupted after %d events\n", n)
			return cli.ExitUnknown
		}
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Flush()
			if cli.IsInterrupted(err) {
				fmt.Fprintf(stderr, "verify replay: interrupted after %d events; no verdict\n", n)
				return cli.ExitUnknown
			}
			return replayBad(stderr, file, err)
		}
		if tl != nil {
			tl.Add(e)
		}
		err = conf.Step(e)
		if err != nil && !errors.As(err, &cerr) {
			w.Flush()
			return replayBad(stderr, file, fmt.Errorf("%s:%d: %w", file, src.Line(), err))
		}
		if cerr != nil && cerr.Premise == conform.PremiseWellFormed {
			w.Flush() // the event's form, not the executor's behaviour: bad input, as check says
			return replayBad(stderr, file, fmt.Errorf("%s:%d: malformed event: %s", file, src.Line(), cerr.Reason))
		}
		if cerr != nil {
			if interactive {
				frames.push(replayFrame{i: n, e: e, lanes: conf.BoundedLanes(replayShown), err: cerr})
			} else {
				fmt.Fprintf(w, "%6d  %s\n", n+1, traces.Printable(cli.ShortEvent(e)))
				printViolationLines(w, cerr)
				fmt.Fprintln(w, "        state before the event, unchanged:")
				printLanesBounded(w, conf.BoundedLanes(replayShown))
			}
			if tl != nil {
				tl.HoldFrom(n + 50)
				for {
					if e, err := src.Next(); err != nil {
						break
					} else {
						tl.Add(e)
					}
				}
			}
			break
		}
		if n+1 >= *from {
			if interactive {
				lanes = conf.BoundedLanes(replayShown)
				frames.push(replayFrame{i: n, e: e, lanes: lanes})
			} else {
				// What the event changed: the queue and worker lines that
				// differ, and its task's state. O(W + replayShown).
				fmt.Fprintf(w, "%6d  %s\n", n+1, traces.Printable(cli.ShortEvent(e)))
				next := conf.BoundedLanes(replayShown)
				task := conf.TaskLane(int(e.Task))
				switch {
				case taskShown[e.Task] == task:
					task = ""
				case strings.HasSuffix(task, ":"+model.Done.String()):
					// A DONE task is forgotten, so that memory stays
					// bounded by the tasks not DONE; an event that
					// touches it later shows its state again.
					delete(taskShown, e.Task)
				default:
					taskShown[e.Task] = task
				}
				printLanesChanged(w, lanes, next, task)
				lanes = next
			}
		} else if interactive {
			lanes = conf.BoundedLanes(replayShown)
		}
	}
	var mark *picture.Mark
	code := cli.ExitHolds
	var end []string
	if cerr != nil {
		mark = &picture.Mark{Index: n, Rule: ruleName(cerr), Message: cerr.Error()}
		code = cli.ExitViolated
		if cerr.Limit != "" {
			code = cli.ExitUnknown // a limit of the checker, not the executor's fault
		}
	} else {
		rep := conf.Finish()
		var b strings.Builder
		fmt.Fprintf(&b, "end of trace after %d events\n", n)
		printFinish(&b, rep)
		end = strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		switch rep.Verdict {
		case checker.Violated:
			code = cli.ExitViolated
			if rep.Err != nil {
				mark = &picture.Mark{Index: min(rep.Err.Index, n), Rule: ruleName(rep.Err), Message: rep.Err.Error()}
			} else {
				mark = &picture.Mark{Index: -1, Message: finishSummary(rep)}
			}
		case checker.Unknown:
			code = cli.ExitUnknown
			mark = &picture.Mark{Index: -1, Message: finishSummary(rep), Label: "unknown"}
		}
		if !interactive {
			for _, l := range end {
				fmt.Fprintln(w, traces.Printable(l))
			}
		}
	}
	if tl != nil {
		err := traces.WriteOutput(*html, func(o *traces.OutputFile) error { return tl.WriteHTML(o, mark) }, file)
		if err != nil {
			fmt.Fprintf(stderr, "verify replay: %v\n", err)
			return cli.ExitUsage
		}
		if !interactive {
			fmt.Fprintf(w, "timeline: %s\n", traces.Printable(*html))
		}
	}
	if interactive {
		w.Flush()
		total := n
		if cerr != nil {
			total++ // the violating event, replayed last
		}
		kept := frames.slice()
		st := &stepper{title: title, init: initial, frames: kept, end: end, total: total, dropped: total - len(kept)}
		restore, err := rawTerminal(os.Stdin)
		if err != nil {
			fmt.Fprintf(stderr, "verify replay: %v (use --print)\n", err)
			return cli.ExitUsage
		}
		// The terminal is raw until restored: restore it on SIGTERM and
		// SIGHUP too (Ctrl-C arrives as a key).
		sctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGHUP)
		st.run(sctx, os.Stdin, stdout, -1)
		interrupted := sctx.Err() != nil // before stop, which cancels sctx
		stop()
		restore()
		if interrupted {
			fmt.Fprintln(stderr, "verify replay: interrupted")
			return cli.ExitUnknown
		}
		if *html != "" {
			fmt.Fprintf(stdout, "timeline: %s\n", traces.Printable(*html))
		}
	}
	return code
}

// frameRing keeps the last max frames of an interactive replay: the
// violation and the events before it are what a long trace is stepped
// through for; the events before those are replayed but not kept (the
// screen says so and names --from, which moves the window).
type frameRing struct {
	max   int
	buf   []replayFrame
	start int // the oldest frame, once buf is full
}

func (r *frameRing) push(f replayFrame) {
	if len(r.buf) < r.max {
		r.buf = append(r.buf, f)
		return
	}
	r.buf[r.start] = f
	r.start = (r.start + 1) % r.max
}

// slice returns the frames kept, oldest first.
func (r *frameRing) slice() []replayFrame {
	return append(r.buf[r.start:len(r.buf):len(r.buf)], r.buf[:r.start]...)
}

func printViolationLines(w io.Writer, cerr *conform.Error) {
	fmt.Fprintf(w, "        VIOLATION of %s: %s\n", ruleName(cerr), traces.Printable(cerr.Error()))
	if cerr.Premise != "" {
		fmt.Fprintf(w, "        premise: %s fails\n", traces.Printable(strings.TrimSuffix(cerr.Premise, " fails")))
	}
	if cerr.Reason != "" {
		fmt.Fprintf(w, "        instead: %s\n", traces.Printable(cerr.Reason))
	}
}

// replayLineMax bounds one printed line of state (a long queue, many
// tasks): the rest is counted.
const replayLineMax = 160

func bounded(l string) string {
	l = traces.Printable(l)
	if r := []rune(l); len(r) > replayLineMax {
		return string(r[:replayLineMax]) + fmt.Sprintf(" … (%d more characters)", len(r)-replayLineMax)
	}
	return l
}

func printLanesBounded(w io.Writer, lanes string) {
	for _, l := range strings.Split(strings.TrimRight(lanes, "\n"), "\n") {
		fmt.Fprintf(w, "        | %s\n", bounded(l))
	}
}

// printLanesChanged prints the queue and worker lines of the state that
// differ between before and after (each of BoundedLanes' lines, the tasks
// line left out), and the event's task as it is now.
func printLanesChanged(w io.Writer, before, after, task string) {
	b := strings.Split(before, "\n")
	for i, l := range strings.Split(after, "\n") {
		if strings.HasPrefix(l, "tasks") || (i < len(b) && b[i] == l) {
			continue
		}
		fmt.Fprintf(w, "        | %s\n", bounded(l))
	}
	if task != "" {
		fmt.Fprintf(w, "        | %s\n", bounded(task))
	}
}

func replayBad(stderr io.Writer, file string, err error) int {
	if cli.IsInterrupted(err) {
		// Ctrl-C while a named pipe waited for its writer, or before the
		// header came: no verdict, not bad input.
		fmt.Fprintf(stderr, "verify replay: interrupted while opening %s; no verdict\n", traces.Printable(file))
		return cli.ExitUnknown
	}
	msg := err.Error()
	if !strings.Contains(msg, file) {
		msg = file + ": " + msg
	}
	fmt.Fprintf(stderr, "verify replay: bad input: %s\n", traces.Printable(msg))
	return cli.ExitUsage
}

// replayFlagSpecs is the table of verify replay's numeric flags.
func replayFlagSpecs() []cli.FlagSpec {
	return []cli.FlagSpec{{Name: "from", Min: 1, Max: math.MaxInt64}}
}
