package pool

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// crashPool runs each task on a goroutine of its own, without a bound
// (a capacity defect with Capacity 1), and, once more than 40 tasks have
// been submitted, its Close crashes the process the way pond v1.9.0 did:
// a WaitGroup's Done with nothing added, on a goroutine of the pool.
type crashPool struct {
	wg        sync.WaitGroup
	submitted atomic.Int32
}

func (p *crashPool) Submit(f func()) error {
	p.submitted.Add(1)
	p.wg.Add(1)
	go func() { defer p.wg.Done(); f() }()
	return nil
}

func (p *crashPool) Close() error {
	p.wg.Wait()
	if p.submitted.Load() > 40 {
		done := make(chan struct{})
		go p.release(done)
		<-done
	}
	return nil
}

func (p *crashPool) release(done chan struct{}) {
	var wg sync.WaitGroup
	wg.Done() // sync: negative WaitGroup counter, on the pool's goroutine
	close(done)
}

// TestCrashIsAFinding: a pool that crashes the process in some cases is
// reported once as no-crash, with the panic, the pool's function and the
// stack; the run goes on past the crashes and still reports the pool's
// other defect (capacity); repeated crashes count, up to MaxCrashes.
func TestCrashIsAFinding(t *testing.T) {
	cfg := fast(Config{Capacity: 1, Cases: 40, MaxTasks: 64, MaxCrashes: 20})
	rep := exploreFor(t, func(Options) Pool { return &crashPool{} }, cfg)
	var crash *Finding
	got := map[string]bool{}
	for _, f := range rep.Findings {
		got[f.Property] = true
		if f.Property == NoCrash {
			if crash != nil {
				t.Errorf("the same crash reported twice: %v", f)
			}
			crash = f
		}
	}
	if crash == nil {
		t.Fatalf("no crash finding; report: %+v", rep)
	}
	for _, want := range []string{"negative WaitGroup counter"} {
		if !strings.Contains(crash.Detail, want) {
			t.Errorf("crash detail %q lacks %q", crash.Detail, want)
		}
	}
	if crash.Op != "crash in github.com/execspec/execspec/properties/pool.(*crashPool).release" {
		t.Errorf("crash site %q", crash.Op)
	}
	if !strings.Contains(crash.Stack, "goroutine ") || !strings.Contains(crash.Workload, "-pool.from=") {
		t.Errorf("crash without its stack or its replay: %q / %q", crash.Stack, crash.Workload)
	}
	if !got[CapacityBound] {
		t.Errorf("the run did not go on to the capacity defect: %v", rep.Err())
	}
	if rep.Stopped != "stopped after 20 crashing cases" && rep.Cases != cfg.Cases {
		t.Errorf("ran %d of %d cases, stopped %q", rep.Cases, cfg.Cases, rep.Stopped)
	}
	if rep.Known[crash.Key()] == 0 && rep.Stopped == "" {
		t.Errorf("repeated crashes not counted: %v", rep.Known)
	}
}

func TestRunPattern(t *testing.T) {
	if got := runPattern("TestA/b.c+"); got != `^TestA$/^b\.c\+$` {
		t.Errorf("runPattern: %s", got)
	}
}

func TestCrashSite(t *testing.T) {
	out := "panic: sync: negative WaitGroup counter\n\ngoroutine 7 [running]:\nsync.(*WaitGroup).Add(0xc0000120a0, 0xffffffffffffffff)\n\t/usr/local/go/src/sync/waitgroup.go:64 +0x1a5\nsync.(*WaitGroup).Done(...)\n\t/x\ngithub.com/alitto/pond.(*WorkerPool).stop(0xc000)\n\t/m/pond.go:1 +0x2\ncreated by x\n"
	f := crashFinding([]byte("some output\n"+out), nil, progress{Case: 3, Workload: "w", Pool: "p"}, 1)
	if f.Op != "crash in github.com/alitto/pond.(*WorkerPool).stop" || !strings.HasPrefix(f.Detail, "the process crashed: panic: sync: negative") {
		t.Errorf("got %q, %q", f.Op, f.Detail)
	}
	f = crashFinding([]byte("bye\n"), nil, progress{Case: 3}, 1)
	if !strings.Contains(f.Detail, "without a panic") {
		t.Errorf("an exit without a panic: %q", f.Detail)
	}
}

// Under control the crash site is the pool's frame, past the runtime's,
// sync's, the controlled runtime's and the panic call itself.
func TestCrashSiteUnderControl(t *testing.T) {
	stack := `goroutine 13 [running]:
runtime/debug.Stack()
	/usr/local/go/src/runtime/debug/stack.go:26 +0x5e
github.com/execspec/execspec/instrument/rt.(*run).exit(0x1, 0x2)
	/x/rt/sched.go:310 +0x5e
panic({0x5f1e20?, 0x6a4f40?})
	/usr/local/go/src/runtime/panic.go:783 +0x132
sync.(*WaitGroup).Add(0x1, 0xffffffffffffffff)
	/usr/local/go/src/sync/waitgroup.go:64 +0x1
github.com/execspec/execspec/instrument/rt.(*WaitGroup).Add(0x1, 0x2)
	/x/rt/sync.go:190 +0x1
example.com/ctlpool.(*Pool).Submit.func1()
	/x/ctlpool/pool.go:72 +0x1
`
	if got, want := crashSite(stack), "crash in example.com/ctlpool.(*Pool).Submit.func1"; got != want {
		t.Fatalf("crashSite = %q, want %q", got, want)
	}
}
