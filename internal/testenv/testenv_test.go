package testenv

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fake records what a helper does to a test: a skip or a failure ends
// the goroutine as the testing package's do (runtime.Goexit), so the code
// after it does not run.
type fake struct {
	testing.TB
	skipped, failed string
	errors          int
}

func (f *fake) Helper()               {}
func (f *fake) Errorf(string, ...any) { f.errors++ }
func (f *fake) Skip(args ...any)      { f.skipped = args[0].(string); runtime.Goexit() }
func (f *fake) Fatal(args ...any) {
	f.failed = args[0].(string)
	runtime.Goexit()
}
func (f *fake) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls helper on a fake test in a goroutine of its own and returns
// what became of it, and whether helper returned.
func run(t *testing.T, helper func(testing.TB)) (f *fake, returned bool) {
	f = &fake{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(f)
		returned = true
	}()
	<-done
	return f, returned
}

func TestOptIn(t *testing.T) {
	t.Setenv("TESTENV_OPT", "")
	f, returned := run(t, func(tb testing.TB) { OptIn(tb, "TESTENV_OPT") })
	if returned || f.skipped != "set TESTENV_OPT=1 to run" {
		t.Errorf("unset: returned %v, skipped %q; want a skip that names the variable", returned, f.skipped)
	}
	t.Setenv("TESTENV_OPT", "7")
	var v string
	f, returned = run(t, func(tb testing.TB) { v = OptIn(tb, "TESTENV_OPT") })
	if !returned || f.skipped != "" || v != "7" {
		t.Errorf("set to 7: returned %v with %q, skipped %q; want 7 and no skip", returned, v, f.skipped)
	}
}

func TestSkipOutsideCI(t *testing.T) {
	t.Setenv("CI", "")
	f, returned := run(t, func(tb testing.TB) { SkipOutsideCI(tb, "no kernels") })
	if returned || f.skipped != "no kernels" || f.failed != "" {
		t.Errorf("outside CI: returned %v, skipped %q, failed %q; want a skip", returned, f.skipped, f.failed)
	}
	t.Setenv("CI", "true")
	f, returned = run(t, func(tb testing.TB) { SkipOutsideCI(tb, "no kernels") })
	if returned || f.skipped != "" || f.failed != "no kernels (CI is set: the test must run here)" {
		t.Errorf("in CI: returned %v, skipped %q, failed %q; want a failure", returned, f.skipped, f.failed)
	}
}

func TestSlow(t *testing.T) {
	short := flag.Lookup("test.short")
	was := short.Value.String()
	t.Cleanup(func() { short.Value.Set(was) })
	for _, on := range []string{"true", "false"} {
		short.Value.Set(on)
		f, returned := run(t, func(tb testing.TB) { Slow(tb, "builds a module") })
		if want := on == "false"; returned != want || (f.skipped == "builds a module") == want {
			t.Errorf("-short=%s: returned %v, skipped %q", on, returned, f.skipped)
		}
	}
}

// TestGoBuild: under -short a test that builds is skipped with its
// reason, and without -short it is skipped for want of a go command.
func TestGoBuild(t *testing.T) {
	short := flag.Lookup("test.short")
	was := short.Value.String()
	t.Cleanup(func() { short.Value.Set(was) })
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	for on, want := range map[string]string{"true": "builds a module", "false": "no go command"} {
		short.Value.Set(on)
		f, returned := run(t, func(tb testing.TB) { GoBuild(tb, "builds a module") })
		if returned || f.skipped != want {
			t.Errorf("-short=%s, no go command: returned %v, skipped %q; want a skip: %s", on, returned, f.skipped, want)
		}
	}
}

// TestGoTool: with no go command on PATH the test is skipped (failed in
// CI); with this machine's PATH, where the test runs, GOROOT names an
// installation with the runtime's source.
func TestGoTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	f, returned := run(t, func(tb testing.TB) { GOROOT(tb) })
	if returned || f.skipped != "no go command" {
		t.Errorf("empty PATH: returned %v, skipped %q; want a skip", returned, f.skipped)
	}
	t.Setenv("CI", "1")
	f, returned = run(t, func(tb testing.TB) { GoTool(tb) })
	if returned || f.failed == "" {
		t.Errorf("empty PATH in CI: returned %v, failed %q; want a failure", returned, f.failed)
	}
}

func TestGOROOT(t *testing.T) {
	root := GOROOT(t)
	if _, err := os.Stat(filepath.Join(root, "src", "runtime", "proc.go")); err != nil {
		t.Errorf("GOROOT %s: %v", root, err)
	}
	if fi, err := os.Stat(GoTool(t)); err != nil || fi.IsDir() {
		t.Errorf("GoTool: %v, want the go command's file", err)
	}
}

// TestGo: the go command's output comes back; a command that fails fails
// the test with the command, the directory and what go printed.
func TestGo(t *testing.T) {
	dir := t.TempDir()
	if out := Go(t, dir, "env", "GOROOT"); strings.TrimSpace(string(out)) != GOROOT(t) {
		t.Errorf("go env GOROOT printed %q, want %q", out, GOROOT(t))
	}
	f, returned := run(t, func(tb testing.TB) { Go(tb, dir, "nosuchcommand") })
	if returned || !strings.HasPrefix(f.failed, "go nosuchcommand in "+dir+": exit status") || !strings.Contains(f.failed, "unknown command") {
		t.Errorf("go nosuchcommand: returned %v, failed %q; want the command, the directory and go's message", returned, f.failed)
	}
}

// TestHeap: a kept allocation of 8 MiB shows in the difference; once it
// is dropped, it no longer does.
func TestHeap(t *testing.T) {
	before := Heap()
	kept := make([]byte, 8<<20)
	with := Heap()
	runtime.KeepAlive(kept)
	after := Heap()
	if d := int64(with) - int64(before); d < 7<<20 || d > 9<<20 {
		t.Errorf("heap %d before, %d with 8 MiB kept: want about 8 MiB more", before, with)
	}
	if int64(after)-int64(before) > 1<<20 {
		t.Errorf("heap %d before, %d after the 8 MiB were dropped: want no more than 1 MiB more", before, after)
	}
}

// TestPlantedLink: a write through the planted link is caught; so is one
// that replaces the link; a write elsewhere is not.
func TestPlantedLink(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(p PlantedLink) error
		fails bool
	}{
		{"elsewhere", func(p PlantedLink) error { return os.WriteFile(p.Link+".new", []byte("x"), 0o644) }, false},
		{"through the link", func(p PlantedLink) error { return os.WriteFile(p.Link, []byte("x"), 0o644) }, true},
		{"over the link", func(p PlantedLink) error {
			if err := os.Remove(p.Link); err != nil {
				return err
			}
			return os.WriteFile(p.Link, []byte("x"), 0o644)
		}, true},
	} {
		p := PlantLink(t, t.TempDir(), "out.html")
		if err := c.write(p); err != nil {
			t.Fatal(err)
		}
		f := &fake{TB: t}
		p.Kept(f)
		if (f.errors > 0) != c.fails {
			t.Errorf("a write %s: %d errors reported, want failure %v", c.name, f.errors, c.fails)
		}
	}
}
