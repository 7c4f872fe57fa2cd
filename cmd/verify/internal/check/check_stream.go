package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/checker/lin"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/traces"
	"github.com/execspec/execspec/traces/picture"
)

// traceChecker is a streaming trace checker: conform.Conformance, or
// partial.Checker for a partially observed trace.
type traceChecker interface {
	Step(traces.Event) error
}

// checkStream is what verify check does while a trace streams by,
// whichever checker judges it: it feeds the --chrome writer and the --html
// timeline, keeps the last events for the listing of a violation and, with
// --linearizability, the events for that check; it steps the checker until
// its first violation and reads on after it for the pictures and the
// linearizability check, which want the whole trace.
type checkStream struct {
	file string
	f    *checkFlags

	tl        *checkTimeline
	chrome    *picture.ChromeWriter
	chromeOut *traces.OutputFile
	outErrs   []error           // output files not written; the verdict stands
	files     map[string]string // output files written, by kind ("html", "chrome")

	recent      *ring
	n, total    int // events that conform; events read
	cerr        *conform.Error
	line        int // the violation's line in file
	interrupted bool

	linLimit   int
	linEvents  []traces.Event // for the linearizability check, up to linLimit
	linTooLong bool
}

// streamCheck reads the trace of file (src, with header h) through c,
// feeding the output pages asked for in f. It returns the stream read,
// whose abort the caller defers, or nil and the exit code of a check that
// cannot go on: an output file refused, a bad input.
func streamCheck(ctx context.Context, file string, src traceSource, h traces.Header, f *checkFlags, c traceChecker, stdout, stderr io.Writer) (*checkStream, int) {
	st, err := newCheckStream(file, h, f)
	if err != nil {
		fmt.Fprintf(stderr, "verify check: --chrome: %s\n", traces.Printable(err.Error()))
		return nil, cli.ExitUsage
	}
	if err := st.read(ctx, src, c); err != nil {
		st.abort()
		return nil, badInput(stdout, stderr, f.json, file, err)
	}
	return st, 0
}

// newCheckStream prepares the output pages of a check of file with header
// h. The Chrome page is written as the trace is read, in memory
// independent of its length; its file is created first, so that a name
// that cannot be written is refused (the error) before any work. The
// caller defers abort.
func newCheckStream(file string, h traces.Header, f *checkFlags) (*checkStream, error) {
	s := &checkStream{file: file, f: f, tl: newCheckTimeline(f.html, h), files: map[string]string{},
		recent: newRing(f.last + 1), linLimit: lin.DefaultMaxEvents}
	if f.chrome != "" {
		out, err := traces.CreateOutput(f.chrome, file)
		if err != nil {
			return nil, err
		}
		s.chromeOut = out
		if s.chrome, err = picture.NewChromeWriter(out, h); err != nil {
			s.outErrs = append(s.outErrs, fmt.Errorf("--chrome: %w", err))
			s.chrome = nil
		}
	}
	return s, nil
}

// abort removes the Chrome page unless it was committed.
func (s *checkStream) abort() {
	if s.chromeOut != nil {
		s.chromeOut.Abort()
	}
}

// read reads src to its end, or to an interrupt (ctx done: interrupted is
// set), stepping c until its first violation (cerr, and its line). It
// returns a bad input: an error reading src, or an error of c that is not
// a violation, with the file and line.
func (s *checkStream) read(ctx context.Context, src traceSource, c traceChecker) error {
	readOn := s.f.html != "" || s.f.chrome != "" || s.f.lin
	done := ctx.Done()
	for {
		if s.total%256 == 0 {
			select {
			case <-done:
				s.interrupted = true
				return nil
			default:
			}
		}
		e, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if cli.IsInterrupted(err) {
				s.interrupted = true
				return nil
			}
			return err
		}
		s.total++
		if s.f.lin && !s.linTooLong {
			if s.linEvents = append(s.linEvents, e); len(s.linEvents) > s.linLimit {
				s.linEvents, s.linTooLong = nil, true // Unknown, naming the limit: free them now
			}
		}
		if s.chrome != nil {
			if err := s.chrome.Write(e); err != nil {
				s.outErrs = append(s.outErrs, fmt.Errorf("--chrome: %w", err))
				s.chrome = nil
			}
		}
		s.tl.add(e)
		if s.cerr != nil {
			continue // reading on for the pictures and the linearizability check
		}
		s.recent.push(s.n, e)
		if err := c.Step(e); err != nil {
			if !errors.As(err, &s.cerr) {
				return fmt.Errorf("%s:%d: %w", s.file, src.Line(), err)
			}
			if s.cerr.Premise == conform.PremiseWellFormed {
				// The event's form, not the executor's behaviour: bad input.
				bad := s.cerr
				s.cerr = nil
				return fmt.Errorf("%s:%d: malformed event: %s", s.file, src.Line(), bad.Reason)
			}
			s.line = src.Line()
			if !readOn {
				return nil
			}
			s.tl.holdAfter(s.n)
			continue
		}
		s.n++
	}
}

// writeOutputs writes the pages asked for, the violation or the verdict
// marked on the timeline (mark), unless the read was interrupted (then
// what, which names what is not done, is an output error).
func (s *checkStream) writeOutputs(mark *picture.Mark, what string) {
	if s.interrupted {
		s.outErrs = append(s.outErrs, errors.New("interrupted while reading the rest of the trace: "+what))
		return
	}
	if s.chromeOut != nil && s.chrome != nil {
		err := s.chrome.Close()
		if err == nil {
			err = s.chromeOut.Commit()
		}
		if err != nil {
			s.outErrs = append(s.outErrs, fmt.Errorf("--chrome: %w", err))
		} else {
			s.files["chrome"] = s.f.chrome
		}
	}
	if s.f.html != "" {
		if err := s.tl.write(s.f.html, s.file, mark); err != nil {
			s.outErrs = append(s.outErrs, fmt.Errorf("--html: %w", err))
		} else {
			s.files["html"] = s.f.html
		}
	}
}

// noVerdict reports whether the read was interrupted before a violation
// was found: then there is no verdict (checkInterrupted reports it).
func (s *checkStream) noVerdict() bool {
	return s.interrupted && (s.cerr == nil || s.cerr.Limit != "")
}

// exitCode is the exit code of a check whose verdict gives code: an output
// file not written is exit 2, reported after the verdict (a violation
// keeps exit 1: it is the more important news; an interrupt keeps exit 3).
func (s *checkStream) exitCode(code int) int {
	if len(s.outErrs) > 0 && code != cli.ExitViolated && !s.interrupted {
		return cli.ExitUsage
	}
	return code
}

// suggest prints the commands that show a violation of the trace, when no
// timeline was written: the timeline and, when the trace can be stepped
// through (replay), the replay.
func (s *checkStream) suggest(w io.Writer, replay bool) {
	if s.files["html"] != "" || s.file == "-" {
		return
	}
	q := traces.ShellQuote(s.file)
	// The page goes to the temporary directory, not beside the trace: a
	// command suggested writes nothing into the user's tree.
	page := filepath.Join(os.TempDir(), strings.TrimSuffix(filepath.Base(s.file), filepath.Ext(s.file))+".html")
	fmt.Fprintf(w, "see it: %s check --html %s %s", cli.SelfCommand(), traces.ShellQuote(page), q)
	if replay {
		fmt.Fprintf(w, "; step through it: %s replay %s", cli.SelfCommand(), q)
	}
	fmt.Fprintln(w)
}

// printOutErrs prints the output files not written, after the verdict.
func (s *checkStream) printOutErrs(stderr io.Writer) {
	for _, err := range s.outErrs {
		fmt.Fprintf(stderr, "verify check: %s\n", cli.Term(err.Error()))
	}
}

// printFiles names the output files written.
func (s *checkStream) printFiles(w io.Writer) {
	for _, k := range []string{"html", "chrome"} {
		if s.files[k] != "" {
			fmt.Fprintf(w, "%s: %s\n", map[string]string{"html": "timeline", "chrome": "Chrome trace (open in ui.perfetto.dev)"}[k], cli.Term(s.files[k]))
		}
	}
}

// executorOf names the executor of a trace with header h, its workers and
// its policy, for a terminal.
func executorOf(h traces.Header) string {
	return fmt.Sprintf("%s (%d workers, policy %s)", nonEmpty(h.Executor, "an unnamed executor"), h.Workers, nonEmpty(h.Policy, "worksteal"))
}
