package instrument

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/internal/testenv"
)

// TestStdSyncControlled builds testdata/stdsync, whose helper package is
// not instrumented and blocks only in the standard library's sync, with
// and without the overlay of sync (Config.StdSync). With it, two
// goroutines contending on the helper's Mutex are controlled: a lost
// update and a lock-order deadlock are found and replay exactly, and a
// pipeline of WaitGroup.Go, Cond, RWMutex and OnceValue is right under
// every schedule with its sync calls as yield points. Without it neither
// bug is ever found (the helper's locks are no yield points).
func TestStdSyncControlled(t *testing.T) {
	testenv.Slow(t, "builds the standard library with the overlay (a minute without a warm build cache)")
	for _, std := range []bool{true, false} {
		t.Run(fmt.Sprintf("std=%v", std), func(t *testing.T) {
			dir, bin := buildStdSyncModule(t, "stdsync", std, "stdsync_test.go", "helper/helper.go")
			cmd := exec.Command(bin, "-test.run", "^TestStd$", "-test.v")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "STDSYNC_WANT="+map[bool]string{true: "controlled", false: "free"}[std])
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
}

// buildStdSyncModule writes testdata/name's files into a module of
// their own, instruments its test package (with the overlay of sync if
// std) and compiles its test binary.
func buildStdSyncModule(t *testing.T, name string, std bool, files ...string) (dir, bin string) {
	t.Helper()
	dir = testdataModule(t, name, files...)
	b, err := Instrument(Config{Dir: dir, Tests: []string{"."}, Out: t.TempDir(), StdSync: std})
	if err != nil {
		t.Fatal(err)
	}
	if b.StdSync != std {
		t.Fatalf("Build.StdSync = %v", b.StdSync)
	}
	bin = filepath.Join(t.TempDir(), name+".test")
	if err := b.CompileTest(dir, bin); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// TestStdSyncUncontrolledWaiter builds testdata/stdsynchang with the
// overlay: a goroutine that a helper which is not instrumented starts
// (uncontrolled) waits for the standard library's Mutex or RWMutex while
// a controlled goroutine holds it and passes yield points. Go's own wait
// there is not durably blocked for testing/synctest, so the scheduler's
// settling would wait for it for ever; the overlay's waits on a channel
// that the release closes. The runs end with the right count under
// every schedule and replay exactly, and a holder that waits for the
// waiter is a deadlock that names it. The binary runs under a timeout: a
// hang is reported as one, not left to the test's own.
func TestStdSyncUncontrolledWaiter(t *testing.T) {
	testenv.Slow(t, "builds the standard library with the overlay (a minute without a warm build cache)")
	dir, bin := buildStdSyncModule(t, "stdsynchang", true, "stdsynchang_test.go", "helper/helper.go")
	const limit = 2 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestHang$", "-test.v")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the runs hung: no verdict after %v (an uncontrolled goroutine waiting for a lock a controlled one holds keeps the scheduler from settling)\n%s", limit, out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)

	// Without the overlay the wait is Go's: the run cannot go on, and the
	// watchdog stops the binary within its limit (a minute by default,
	// here 2s) naming the goroutine in the way, not at the test's
	// timeout.
	dir, bin = buildStdSyncModule(t, "stdsynchang", false, "stdsynchang_test.go", "helper/helper.go")
	ctx, cancel = context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd = exec.CommandContext(ctx, bin, "-test.run", "^TestWithoutOverlay$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EXECSPEC_SETTLE_LIMIT=2s")
	out, err = cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("without the overlay: no verdict after %v\n%s", limit, out)
	}
	for _, want := range []string{"execspec/rt: the scheduler waited", "with verify test --std-sync the lock is controlled", "sync.Mutex.Lock", "helper.go:31"} {
		if err == nil || !strings.Contains(string(out), want) {
			t.Fatalf("without the overlay: %v, and the output lacks %q\n%s", err, want, out)
		}
	}
}

// TestStdSyncRefused: a sync package that differs from the one the
// overlay was written for (a method missing, a blocking call moved, a
// field renamed in internal/sync) is refused with an error that names the
// Go version and what differs; the installed one is accepted.
func TestStdSyncRefused(t *testing.T) {
	goroot := testenv.GOROOT(t)
	if _, err := StdSync(goroot, goEnv(".", "GOVERSION"), t.TempDir()); err != nil {
		t.Fatalf("the installed Go's sync: %v", err)
	}
	cases := []struct {
		file, old, new, want string
	}{
		{"sync/rwmutex.go", "func (rw *RWMutex) TryRLock() bool {", "func (rw *RWMutex) TryReadLock() bool {", "(*RWMutex).TryRLock not found"},
		{"sync/waitgroup.go", "runtime_SemacquireWaitGroup(&wg.sema, synctestDurable)", "runtime_Semacquire(&wg.sema)", "0 calls of runtime_SemacquireWaitGroup"},
		{"sync/cond.go", "notify  notifyList", "notes  notifyList", ""},
		{"internal/sync/mutex.go", "\tstate int32\n", "\tsema2 uint32\n\tstate int32\n", "internal/sync.Mutex does not begin with state int32"},
		{"sync/runtime2.go", "\tnotify uint32\n", "\tnext uint32\n", "sync.notifyList has no field notify"},
	}
	for _, c := range cases {
		fake := t.TempDir()
		for _, d := range []string{"sync", "internal/sync"} {
			ents, err := os.ReadDir(filepath.Join(goroot, "src", d))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.IsDir() {
					continue
				}
				src, err := os.ReadFile(filepath.Join(goroot, "src", d, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if d+"/"+e.Name() == c.file {
					if !strings.Contains(string(src), c.old) {
						t.Fatalf("%s has no %q: update the case", c.file, c.old)
					}
					src = []byte(strings.Replace(string(src), c.old, c.new, 1))
				}
				writeFile(t, filepath.Join(fake, "src", d, e.Name()), src)
			}
		}
		_, err := StdSync(fake, "go1.99", t.TempDir())
		if c.want == "" {
			// A field that the generated code does not read: accepted.
			if err != nil {
				t.Errorf("%s: %v", c.file, err)
			}
			continue
		}
		if !errors.Is(err, ErrStdSync) || !strings.Contains(err.Error(), "go1.99") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s changed: %v; want ErrStdSync naming go1.99 and %q", c.file, err, c.want)
		}
	}
}
