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
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/execspec/execspec/cmd/verify/internal/check"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/cmd/verify/internal/gotest"
	"github.com/execspec/execspec/cmd/verify/internal/modelcheck"
	"github.com/execspec/execspec/cmd/verify/internal/suite"
)

// Exit codes, shared by every subcommand (package cli declares them).
const (
	exitHolds    = cli.ExitHolds
	exitViolated = cli.ExitViolated
	exitUsage    = cli.ExitUsage
	exitUnknown  = cli.ExitUnknown
)

// commands are the subcommands by name. Each package under internal/
// declares its own; "default" is what verify with no arguments runs.
var commands = map[string]cli.Command{}

func init() {
	for _, c := range []cli.Command{check.Check, check.Replay, modelcheck.Model, modelcheck.Merge, modelcheck.Default, suite.Run, suite.Cover, gotest.Test} {
		register(c)
	}
}

func register(c cli.Command) {
	if _, dup := commands[c.Name]; dup {
		panic("verify: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// main is the one signal path: SIGINT, SIGTERM and SIGHUP (and a closed
// output pipe, outputClosed) cancel the same context, which every
// subcommand and every input it reads (cli.OpenInput) observes. A write
// error on standard output (a full disk, /dev/full) is not lost: the
// command ends with exit 2 and says so on stderr.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	ctx, closed := outputClosed(ctx)
	out := &cli.CheckedWriter{W: os.Stdout}
	code := dispatch(ctx, os.Args[1:], out, os.Stderr)
	stop()
	if out.Err != nil {
		fmt.Fprintf(os.Stderr, "verify: writing standard output: %v\n", out.Err)
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

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if c, ok := commands["default"]; ok {
			return c.Run(ctx, nil, stdout, stderr)
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
	if !ok || c.Name == "default" {
		fmt.Fprintf(stderr, "verify: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	if cli.HelpAsked(args[1:]) {
		// Help asked for is output (stdout, exit 0), as verify --help is;
		// a usage printed for a bad flag stays on stderr.
		return c.Run(ctx, args[1:], stdout, stdout)
	}
	return c.Run(ctx, args[1:], stdout, stderr)
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
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'verify COMMAND -h' for a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 holds, 1 violated, 2 usage, input or output error, 3 unknown (budget spent,")
	fmt.Fprintln(w, "or SIGINT/SIGTERM: what was found so far is printed). Under go run, 2 and 3 arrive as 1:")
	fmt.Fprintln(w, "go install ./cmd/verify to see them.")
}
