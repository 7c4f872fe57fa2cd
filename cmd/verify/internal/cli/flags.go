package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// FlagSpec is the documented range of one numeric flag, and where it
// applies. Every subcommand declares its flags' specs in one table and
// checks them with ValidateFlags after parsing, so that a value outside the
// range is refused with the range named, never replaced by a default or
// clamped, and a flag given where it has no effect is refused with the
// reason, never ignored.
type FlagSpec struct {
	Name     string
	Min, Max int64 // the range, inclusive; a duration's in nanoseconds
	// Applies, when not nil, says why the flag has no effect with the
	// other flags given ("" when it has one). It is asked only when the
	// flag was given on the command line.
	Applies func() string
	// ExplicitOnly restricts the flag to an explicit value: set, it must be given
	// explicitly or not at all (a default may lie outside min..max, such
	// as 0 meaning "the policy's default").
	ExplicitOnly bool
}

// ValidateFlags checks the flags of fs against specs. It returns every
// problem at once, joined, each naming the flag, its value and the range.
func ValidateFlags(fs *flag.FlagSet, specs []FlagSpec) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	for _, s := range specs {
		f := fs.Lookup(s.Name)
		if f == nil {
			panic("verify: flag spec for an undeclared flag --" + s.Name)
		}
		if given[s.Name] && s.Applies != nil {
			if why := s.Applies(); why != "" {
				errs = append(errs, fmt.Errorf("--%s does not apply: %s", s.Name, why))
				continue
			}
		}
		if s.ExplicitOnly && !given[s.Name] {
			continue
		}
		if s.Min == 0 && s.Max == 0 {
			continue // a flag with a spec for where it applies only
		}
		var v int64
		isDur := false
		switch x := f.Value.(flag.Getter).Get().(type) {
		case int:
			v = int64(x)
		case int64:
			v = x
		case uint64:
			v = int64(min(x, math.MaxInt64))
		case time.Duration:
			v, isDur = int64(x), true
		default:
			continue
		}
		if v < s.Min || v > s.Max {
			errs = append(errs, fmt.Errorf("--%s %s: want %s", s.Name, f.Value.String(), rangeText(s.Min, s.Max, isDur)))
		}
	}
	return errors.Join(errs...)
}

func rangeText(lo, hi int64, dur bool) string {
	show := func(v int64) string {
		if dur {
			return time.Duration(v).String()
		}
		return fmt.Sprint(v)
	}
	if hi == math.MaxInt64 {
		if lo == 0 {
			return "0 or more"
		}
		return show(lo) + " or more"
	}
	return show(lo) + " to " + show(hi)
}

// OnlyWith returns an Applies function: the flag has an effect only when
// cond holds, which what describes.
func OnlyWith(cond func() bool, what string) func() string {
	return func() string {
		if cond() {
			return ""
		}
		return "it has an effect only " + what
	}
}

// MaxDuration bounds every duration flag: far above any useful value and
// far below what would overflow.
const MaxDuration = int64(1000 * time.Hour)

// FlagError prints a flag error of subcommand cmd and returns ExitUsage.
func FlagError(stderr interface{ Write([]byte) (int, error) }, cmd string, err error) int {
	for _, l := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "verify %s: %s\n", cmd, l)
	}
	fmt.Fprintf(stderr, "(see %s %s -h)\n", SelfCommand(), cmd)
	return ExitUsage
}

// NewFlagSet returns the flag set of a subcommand, writing to stderr, whose
// -h prints in the layout every subcommand shares: help (the usage line,
// what the command does, examples), the flags, then exits (the exit codes;
// "" for none).
func NewFlagSet(name string, stderr io.Writer, help, exits string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, help)
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
		if exits != "" {
			fmt.Fprint(stderr, "\n", exits)
		}
	}
	return fs
}

// ParseFlags parses a subcommand's arguments. Flags may follow the
// arguments (`verify check FILE --json`), as they may precede them; after
// "--" every argument is an argument. When it reports !ok the subcommand
// returns code at once: 0 after -h (the usage was printed), 2 after a bad
// flag (the flag package printed why).
func ParseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return ExitHolds, false
			}
			return ExitUsage, false
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

// ParseNoArgs is ParseFlags for a subcommand that takes flags only: an
// argument left after the flags is refused (exit 2), naming it.
func ParseNoArgs(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if code, ok := ParseFlags(fs, args); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see %s %s -h)\n", fs.Name(), fs.Arg(0), SelfCommand(), strings.TrimPrefix(fs.Name(), "verify "))
		return ExitUsage, false
	}
	return 0, true
}

// HelpAsked reports whether a subcommand's args ask for its help.
func HelpAsked(args []string) bool {
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
