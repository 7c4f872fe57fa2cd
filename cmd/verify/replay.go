package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

func init() {
	register(command{
		name:    "replay",
		summary: "step through a trace against the model, with the state of every queue and worker",
		run:     runReplay,
	})
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	html := fs.String("html", "", "also write an HTML timeline, with the violation marked, to `FILE`")
	from := fs.Int("from", 1, "print the state only from event `N` on, counting from 1 (the events before are still replayed)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: verify replay [flags] FILE")
		fmt.Fprintln(stderr, "\nReplays the trace in FILE through the model, printing each event and then the")
		fmt.Fprintln(stderr, "state after it: the global queue, and for each worker what it runs and its local")
		fmt.Fprintln(stderr, "queue (worker lanes). Stops at the first event that is not an enabled rule.")
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nExit codes: 0 conforms, 1 violation, 2 bad input or usage, 3 unknown (tasks not DONE at the end).")
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "verify replay: want one trace FILE (see verify replay -h)")
		return exitUsage
	}
	file := fs.Arg(0)
	in, closeIn, err := openInput(file)
	if err != nil {
		return replayBad(stderr, file, err)
	}
	defer closeIn()
	src, err := openTrace(in, file)
	if err != nil {
		return replayBad(stderr, file, err)
	}
	h := src.Header()
	conf, err := checker.NewConformance(h)
	if err != nil {
		return replayBad(stderr, file, fmt.Errorf("%s:1: %w", file, err))
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	fmt.Fprintf(w, "replaying %s: %s, %d workers, policy %s\n", file, nonEmpty(h.Executor, "an unnamed executor"), h.Workers, nonEmpty(h.Policy, "worksteal"))
	if *from <= 1 {
		fmt.Fprintln(w, "initial state:")
		printStateLanes(w, conf.Lanes())
	}
	var (
		all  []traces.Event
		cerr *checker.ConformanceError
		n    int
	)
	for ; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			fmt.Fprintf(w, "interrupted after %d events\n", n)
			return exitUnknown
		}
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Flush()
			return replayBad(stderr, file, err)
		}
		if *html != "" {
			all = append(all, e)
		}
		err = conf.Step(e)
		if err != nil && !errors.As(err, &cerr) {
			w.Flush()
			return replayBad(stderr, file, fmt.Errorf("%s:%d: %w", file, src.Line(), err))
		}
		if cerr != nil {
			fmt.Fprintf(w, "%6d  %s\n", n+1, shortEvent(e))
			fmt.Fprintf(w, "        VIOLATION of %s: %s\n", cerr.Rule, cerr.Error())
			if cerr.Premise != "" {
				fmt.Fprintf(w, "        premise: %s fails\n", strings.TrimSuffix(cerr.Premise, " fails"))
			}
			if cerr.Reason != "" {
				fmt.Fprintf(w, "        instead: %s\n", cerr.Reason)
			}
			fmt.Fprintln(w, "        (state before the event, unchanged)")
			break
		}
		if n+1 >= *from {
			fmt.Fprintf(w, "%6d  %s\n", n+1, shortEvent(e))
			printStateLanes(w, conf.Lanes())
		}
	}
	var mark *traces.Mark
	code := exitHolds
	if cerr != nil {
		mark = &traces.Mark{Index: n, Rule: cerr.Rule.String(), Message: cerr.Error()}
		code = exitViolated
	} else {
		rep := conf.Finish()
		fmt.Fprintf(w, "end of trace after %d events\n", n)
		printFinish(w, rep)
		switch rep.Verdict {
		case checker.Violated:
			code = exitViolated
			if rep.Err != nil {
				mark = &traces.Mark{Index: min(rep.Err.Index, n), Rule: rep.Err.Rule.String(), Message: rep.Err.Error()}
			} else {
				mark = &traces.Mark{Index: -1, Message: finishSummary(rep)}
			}
		case checker.Unknown:
			code = exitUnknown
			mark = &traces.Mark{Index: -1, Message: finishSummary(rep), Label: "unknown"}
		}
	}
	if *html != "" {
		if err := writeFile(*html, func(out io.Writer) error { return traces.WriteHTML(out, h, all, mark) }); err != nil {
			fmt.Fprintf(stderr, "verify replay: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(w, "timeline: %s\n", *html)
	}
	return code
}

func printStateLanes(w io.Writer, lanes string) {
	for _, l := range strings.Split(strings.TrimRight(lanes, "\n"), "\n") {
		fmt.Fprintf(w, "        | %s\n", l)
	}
}

func replayBad(stderr io.Writer, file string, err error) int {
	msg := err.Error()
	if !strings.Contains(msg, file) {
		msg = file + ": " + msg
	}
	fmt.Fprintf(stderr, "verify replay: bad input: %s\n", msg)
	return exitUsage
}
