package traces

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"worksteal", "worksteal"},
		{"täsk ✓", "täsk ✓"},
		{"\x1b[2J\x1b]0;pwned\x07", `\x1b[2J\x1b]0;pwned\x07`},
		{"ok\nverdict: holds", `ok\nverdict: holds`},
		{"a\tb\rc", `a\tb\rc`},
		{"\x9b31m", `\x9b31m`},             // invalid UTF-8: a raw 8-bit CSI
		{"\u009b31m", `\x9b31m`},           // the same as a UTF-8 C1 control
		{"abc\u202edcba", `abc\u202edcba`}, // right-to-left override
		{"\x7f", `\x7f`},
		{"\u2028", `\u2028`},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, s := range []string{"", "plain", "λ-calculus"} {
		if n := testing.AllocsPerRun(10, func() { _ = Printable(s) }); n != 0 {
			t.Errorf("Printable(%q) allocates %v times", s, n)
		}
	}
}

func FuzzPrintable(f *testing.F) {
	f.Add("\x1b[31mred")
	f.Add("a b;$(touch x).jsonl")
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		if Printable(p) != p {
			t.Fatalf("Printable(%q) = %q is not printable", s, p)
		}
		for _, r := range p {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Printable(%q) = %q holds %U", s, p, r)
			}
		}
		q := ShellQuote(s)
		if Printable(q) != q {
			t.Fatalf("ShellQuote(%q) = %q is not printable", s, q)
		}
	})
}

// TestShellQuote runs each quoted word through a real shell and checks that
// it arrives as one argument, unchanged, with nothing executed.
func TestShellQuote(t *testing.T) {
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	words := []string{
		"trace.jsonl", "a b;$(touch x).jsonl", "it's", `back\slash`, "`touch x`",
		"$HOME", "~", "*", "a\nb", "\x1b[2J", "", "-x", "%s", "é", "!x",
	}
	for _, w := range words {
		q := ShellQuote(w)
		out, err := exec.Command(sh, "-c", "cd "+ShellQuote(dir)+" && printf '%s\\0' "+q).Output()
		if err != nil {
			t.Fatalf("%q quoted as %s: %v", w, q, err)
		}
		if got := strings.TrimSuffix(string(out), "\x00"); got != w || strings.Count(string(out), "\x00") != 1 {
			t.Errorf("ShellQuote(%q) = %s: the shell gave %q", w, q, out)
		}
	}
	if _, err := os.Stat(dir + "/x"); err == nil {
		t.Errorf("a quoted word ran a command")
	}
	if q := ShellQuote("bench/run-1.jsonl"); q != "bench/run-1.jsonl" {
		t.Errorf("a plain path was quoted: %s", q)
	}
}
