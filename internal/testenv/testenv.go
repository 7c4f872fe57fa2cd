// Package testenv says whether a test can run on this machine and skips
// it, with the reason, when it cannot: the one place for the preludes
// that the module's slow tests share (the -short flag, the go command,
// the Go installation's source, an environment variable that opts in).
// It is for tests only, like the Go project's own internal/testenv.
//
//	func TestBuildsSomething(t *testing.T) {
//		testenv.Slow(t, "builds a module (about 10 s)")
//		goroot := testenv.GOROOT(t)
//		...
//	}
//
// A test whose inputs this machine lacks is skipped; in CI (the
// environment variable CI set), where they must be there, it fails
// instead, so that no test is silently left out where it matters.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Slow skips t under -short; why says what makes it slow ("builds a
// module (about 10 s)").
func Slow(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
}

// SkipOutsideCI skips t with why; with CI set it fails t instead.
func SkipOutsideCI(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why + " (CI is set: the test must run here)")
	}
	t.Skip(why)
}

// GoTool returns the path of the go command on PATH; without one it
// skips t (fails it in CI).
func GoTool(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("go")
	if err != nil {
		SkipOutsideCI(t, "no go command")
	}
	return path
}

// GoBuild skips t under -short, since it builds (why says what, and how
// long it takes), and without a go command (fails it in CI then).
func GoBuild(t testing.TB, why string) {
	t.Helper()
	Slow(t, why)
	GoTool(t)
}

// GOROOT returns the root of the Go installation of the go command on
// PATH (go env GOROOT); without one it skips t (fails it in CI).
func GOROOT(t testing.TB) string {
	t.Helper()
	out, err := exec.Command(GoTool(t), "env", "GOROOT").Output()
	root := strings.TrimSpace(string(out))
	if err != nil || root == "" {
		SkipOutsideCI(t, "go env GOROOT gives no Go installation")
	}
	if _, err := os.Stat(filepath.Join(root, "src", "runtime")); err != nil {
		SkipOutsideCI(t, "the Go installation at "+root+" has no source")
	}
	return root
}

// Go runs the go command (GoTool) with args in dir and returns what it
// printed, standard output and error together; if it fails, t fails with
// the command and that output.
func Go(t testing.TB, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(GoTool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

// Heap returns the bytes of the live heap right after a garbage
// collection: the difference between two calls, around code that builds
// a structure it keeps, is what that structure costs.
func Heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A PlantedLink is a symbolic link that a test plants where the code it
// tests will write (a directory may be shared with someone hostile), to a
// file, the victim, that the write must leave as it was.
type PlantedLink struct {
	Link, Victim string
}

// PlantLink makes the victim, a file in dir that holds "keep", and a
// symbolic link to it at dir/name; it skips t where the file system has
// no symbolic links.
func PlantLink(t testing.TB, dir, name string) PlantedLink {
	t.Helper()
	p := PlantedLink{Link: filepath.Join(dir, name), Victim: filepath.Join(dir, "victim")}
	if err := os.WriteFile(p.Victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p.Victim, p.Link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	return p
}

// Kept fails t unless the victim still holds "keep" and the link is still
// a link to it: the write went neither through the link nor over it.
func (p PlantedLink) Kept(t testing.TB) {
	t.Helper()
	if b, err := os.ReadFile(p.Victim); err != nil || string(b) != "keep" {
		t.Errorf("the planted link's target was written: %q (%v)", b, err)
	}
	if to, err := os.Readlink(p.Link); err != nil || to != p.Victim {
		t.Errorf("the planted link %s was replaced (%v)", p.Link, err)
	}
}

// OptIn skips t unless the environment variable name is set (to anything
// but ""), for the long runs and the reproductions that only run when
// asked for; it returns the variable's value.
func OptIn(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skip("set " + name + "=1 to run")
	}
	return v
}
