// Command verify checks async task executors against the execspec model.
//
// Usage:
//
//	verify                 run the default check and say what to try next
//	verify model [flags]   model-check the rules (every interleaving of a small configuration)
//	verify merge FILE...   combine the result files of a swarm into one verdict
//	verify check FILE      check a recorded trace against the model
//	verify replay FILE     step through a trace with the state of every queue
//	verify run [flags]     run the property suite on a built-in executor
//	verify cover [flags]   measure how much of the model's state space an executor's runs reach
//	verify test [flags] [PACKAGE...]   run a package's tests under controlled schedules (instrumented at build time), --runs times each or for --time
//
// Exit codes: 0 holds, 1 violated, 2 usage or input error (or an output
// that could not be written), 3 unknown (a budget was spent before a
// verdict, or SIGINT/SIGTERM stopped it: what was found so far is printed).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Exit codes, shared by every subcommand.
const (
	exitHolds    = 0
	exitViolated = 1
	exitUsage    = 2
	exitUnknown  = 3
)

// command is one subcommand. Each lives in its own file and registers itself
// in an init function, so that subcommands can be added without touching
// this file.
type command struct {
	name    string
	summary string
	// run parses args and does the work. ctx is cancelled on SIGINT or
	// SIGTERM: every long phase (reading, checking, writing, exploring,
	// shrinking) observes it within 100ms, and the run stops cleanly and
	// prints what it found so far. It returns the exit code.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("verify: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// main is the one signal path: SIGINT, SIGTERM and SIGHUP (and a closed
// output pipe, outputClosed) cancel the same context,
// which every subcommand and every input it reads (openInput) observes. A
// write error on standard output (a full disk, /dev/full) is not lost:
// the command ends with exit 2 and says so on stderr.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, closed := outputClosed(ctx)
	inputCtx = ctx
	out := &checkedWriter{w: os.Stdout}
	code := dispatch(ctx, os.Args[1:], out, os.Stderr)
	stop()
	if out.err != nil {
		fmt.Fprintf(os.Stderr, "verify: writing standard output: %v\n", out.err)
		code = exitUsage
	}
	if closed() {
		code = exitUsage // nobody reads what is found: an output that could not be written
	}
	os.Exit(code)
}

// outputClosed cancels ctx when a write meets a pipe nobody reads any
// more (verify ... | head -1): SIGPIPE would otherwise kill the process
// at once, leaving what it started (verify test's go test, in a process
// group of its own) running with nobody to stop it. The write fails with
// EPIPE instead and the command stops as on Ctrl-C, its children with
// it; closed reports whether that happened.
func outputClosed(parent context.Context) (ctx context.Context, closed func() bool) {
	ctx, cancel := context.WithCancelCause(parent)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	go func() {
		select {
		case <-pipe:
			cancel(errOutputClosed)
		case <-ctx.Done():
		}
	}()
	return ctx, func() bool { return errors.Is(context.Cause(ctx), errOutputClosed) }
}

var errOutputClosed = errors.New("an output pipe was closed by its reader")

// checkedWriter remembers the first write error of w, so that output
// written with fmt.Fprint (whose errors are easy to drop) is still checked
// once at the end.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if c, ok := commands["default"]; ok {
			return c.run(ctx, nil, stdout, stderr)
		}
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitHolds
	}
	c, ok := commands[args[0]]
	if !ok || c.name == "default" {
		fmt.Fprintf(stderr, "verify: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	if helpAsked(args[1:]) {
		// Help asked for is output (stdout, exit 0), as verify --help is;
		// a usage printed for a bad flag stays on stderr.
		return c.run(ctx, args[1:], stdout, stdout)
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

// helpAsked reports whether a subcommand's args ask for its help.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--h", "-help", "--help":
			return true
		}
	}
	return false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "verify checks async task executors against the execspec model.")
	fmt.Fprintln(w, "\nUsage:\n\n  verify                 run the default check\n  verify COMMAND [flags] [args]")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		if n != "default" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'verify COMMAND -h' for a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 holds, 1 violated, 2 usage, input or output error, 3 unknown (budget spent,")
	fmt.Fprintln(w, "or SIGINT/SIGTERM: what was found so far is printed). Under go run, 2 and 3 arrive as 1:")
	fmt.Fprintln(w, "go install ./cmd/verify to see them.")
}

// selfCommand returns how the user can run this command again: the binary's
// name when it is installed, or "go run ./cmd/verify" under go run (whose
// binary lives in a temporary build directory).
func selfCommand() string {
	arg0 := os.Args[0]
	if strings.Contains(arg0, "go-build") || strings.HasSuffix(arg0, ".test") {
		return "go run ./cmd/verify"
	}
	if filepath.Base(arg0) == arg0 {
		return arg0
	}
	return "verify"
}

// parseFlags parses a subcommand's arguments. Flags may follow the
// arguments (`verify check FILE --json`), as they may precede them; after
// "--" every argument is an argument. When it reports !ok the subcommand
// returns code at once: 0 after -h (the usage was printed), 2 after a bad
// flag (the flag package printed why).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitHolds, false
			}
			return exitUsage, false
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			pos = append(pos, left...) // after "--": arguments only
			break
		}
		pos = append(pos, left[0])
		rest = left[1:]
	}
	// fs.Args() is what the last Parse left: make it the arguments.
	_ = fs.Parse(append([]string{"--"}, pos...))
	return 0, true
}

// parseNoArgs is parseFlags for a subcommand that takes flags only: an
// argument left after the flags is refused (exit 2), naming it.
func parseNoArgs(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if code, ok := parseFlags(fs, args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see %s %s -h)\n", fs.Name(), fs.Arg(0), selfCommand(), strings.TrimPrefix(fs.Name(), "verify "))
		return exitUsage, false
	}
	return 0, true
}

// isTerminal reports whether w is a terminal, where a progress line may be
// rewritten in place.
func isTerminal(w io.Writer) bool {
	if os.Getenv("TERM") == "dumb" {
		return false // no cursor movement: progress goes line by line, replay prints
	}
	if c, ok := w.(*checkedWriter); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isTTY(f)
}
