package lin_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/checker/lin"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/internal/recorded"
)

// linStressWorkload spawns n tasks; each returns Pending k times and is
// woken from another goroutine, at random before, during or after its poll
// returns, sometimes twice; some tasks spawn a child from inside their
// poll; every 7th panics at its last poll (an executor that retries gets a
// factory whose second attempt succeeds).
func linStressWorkload(ex executor.Executor, n, k int, seed uint64) error {
	var wg sync.WaitGroup
	wakes := make(chan executor.Waker, 4*n)
	var done atomic.Bool
	// Wakers from other goroutines.
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			for w := range wakes {
				if r.IntN(3) == 0 {
					runtime.Gosched()
				}
				w.Wake()
				if r.IntN(4) == 0 {
					w.Clone().Wake() // a second wake: coalesced or late
				}
			}
		}()
	}
	mk := func(id int, child bool, attempt int) executor.Future {
		left := k
		spawned := false
		return executor.FutureFunc(func(cx *executor.Context) (any, bool) {
			if !child && !spawned && id%5 == 0 {
				spawned = true
				if _, err := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true })); err != nil && !done.Load() {
					panic(err)
				}
			}
			if left == 0 {
				if id%7 == 0 && attempt == 0 {
					panic("a failing task")
				}
				return id, true
			}
			left--
			w := cx.Waker()
			if id%3 == 0 {
				w.Wake() // woken during its own poll: NOTIFIED
			} else {
				wakes <- w
			}
			return nil, false
		})
	}
	type retrier interface {
		SpawnRetry(factory func() executor.Future, n int) (executor.Handle, error)
	}
	var hs []executor.Handle
	for i := range n {
		var h executor.Handle
		var err error
		id := i + 1
		switch x := ex.(type) {
		case executor.Prioritized:
			h, err = x.SpawnPriority(mk(id, false, 0), i%4)
		case retrier:
			attempt := 0
			h, err = x.SpawnRetry(func() executor.Future { attempt++; return mk(id, false, attempt-1) }, 1)
		default:
			h, err = ex.Spawn(mk(id, false, 0))
		}
		if err != nil {
			return err
		}
		hs = append(hs, h)
	}
	_, retries := ex.(retrier)
	for i, h := range hs {
		_, err := h.Join()
		if failing := (i+1)%7 == 0 && !retries; failing != (err != nil) {
			return fmt.Errorf("task %d: Join: %v", i+1, err)
		}
	}
	err := ex.Wait()
	done.Store(true)
	close(wakes)
	wg.Wait()
	return err
}

// linExecutors is every built-in executor, and the work-stealing one in
// each of its settings.
func linExecutors() map[string]func() executor.Executor {
	m := map[string]func() executor.Executor{}
	for _, name := range executor.BuiltinNames() {
		m[name], _ = executor.Builtin(name)
	}
	for name, c := range map[string]executor.WorkStealConfig{
		"worksteal-4":          {Workers: 4, LocalCap: 4},
		"worksteal-owner-fifo": {Workers: 3, OwnerFIFO: true, LocalCap: 8},
		"worksteal-lifo-slot":  {Workers: 3, LIFOSlot: true, LocalCap: 8},
		"worksteal-steal-half": {Workers: 3, StealHalf: true, LocalCap: 8},
	} {
		m[name] = func() executor.Executor { return executor.NewWorkSteal(c) }
	}
	return m
}

// Histories from every built-in executor under stress are linearizable.
func TestLinearizabilityExecutors(t *testing.T) {
	for name, newEx := range linExecutors() {
		t.Run(name, func(t *testing.T) {
			for run := range linRuns {
				ex := newEx()
				h, events := recorded.Run(t, ex, func() error { return linStressWorkload(ex, 200, 2, uint64(run)) })
				res, err := lin.Check(h, events, lin.Options{Complete: true, Budget: linExecBudget, HTML: fmt.Sprintf("%s/%s.lin.html", t.TempDir(), name)})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != checker.Holds {
					t.Fatalf("run %d: %s", run, res.Summary())
				}
				if run == 0 {
					t.Logf("%s", res.Summary())
				}
			}
		})
	}
}

// Bursts of tasks spawned from inside tasks fill the local deques, so that
// thieves steal (half, in that setting) and deques overflow.
func TestLinearizabilityExecutorsBursts(t *testing.T) {
	for name, newEx := range linExecutors() {
		t.Run(name, func(t *testing.T) {
			for run := range linRuns {
				ex := newEx()
				h, events := recorded.Run(t, ex, func() error {
					for range 30 {
						_, err := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) {
							for range 12 {
								if _, err := ex.Spawn(executor.FutureFunc(func(*executor.Context) (any, bool) {
									runtime.Gosched()
									return nil, true
								})); err != nil {
									panic(err)
								}
							}
							return nil, true
						}))
						if err != nil {
							return err
						}
					}
					return ex.Wait()
				})
				res, err := lin.Check(h, events, lin.Options{Complete: true, Budget: linExecBudget})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != checker.Holds {
					t.Fatalf("run %d: %s", run, res.Summary())
				}
			}
		})
	}
}

// linExecBudget bounds the search of one recorded run. A run takes well
// under a second on a quiet machine; under the race detector on a shared,
// loaded machine it took more than 10 s, and a check out of budget is
// Unknown, which fails these tests: the bound is there to stop a runaway
// search, not to time the checker.
const linExecBudget = time.Minute
