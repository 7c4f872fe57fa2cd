// Package cli is what every subcommand of verify shares: the Command a
// subcommand declares and its exit codes (0 holds, 1 violated, 2 usage,
// input or output error, 3 unknown); its flags (NewFlagSet for the help
// layout, ParseFlags for flags after the arguments, a FlagSpec table that
// ValidateFlags checks); its inputs (OpenInput reads a file, a pipe or
// standard input so that SIGINT and SIGTERM stop it, IsInterrupted tells
// such a read from bad input) and its output files (WriteFile, whole or
// not at all, never onto an input; DefaultOutDir for those no flag
// places); its --json output (PrintJSON, with JSONSchema and VerdictOf);
// and its text for a terminal (Term, ShortEvent, IsTerminal, SelfCommand).
//
// A subcommand's package declares its Command and main lists it:
//
//	var Replay = cli.Command{Name: "replay", Summary: "step through a trace ...", Run: runReplay}
//
//	func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
//		fs := cli.NewFlagSet("verify replay", stderr, replayHelp, replayExits)
//		from := fs.Int("from", 1, "...")
//		if code, ok := cli.ParseFlags(fs, args); !ok {
//			return code
//		}
//		...
//	}
package cli
