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
