package chaselev

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// StressConfig describes one stress run. The zero value works: 200 rounds,
// one element per round, one thief per remaining CPU, not pinned.
type StressConfig struct {
	Racy     bool // use NewRacy
	Rounds   int  // rounds; 0 means 200
	PerRound int  // elements the owner pushes before each round; 0 means 1
	Thieves  int  // 0 means one per CPU besides the owner's (at least 1)
	Pinned   bool // pin the owner and each thief to distinct CPUs
	// Capacity of the deque; 0 means 64.
	Capacity int
}

// StressResult is what one stress run saw.
type StressResult struct {
	Ops        []Op    // every goroutine's operations; Client 0 is the owner, 1.. the thieves
	Duplicates []int64 // values taken twice (by the owner and a thief, or two thieves)
	Lost       []int64 // values pushed and never taken
	CPUs       []int   // the CPUs used when pinned: owner first
	GOMAXPROCS int
}

// spinBarrier makes n goroutines start a round together: each spins until
// the last one arrives. Sense-reversing, so it can be reused at once. The
// spin yields every 1024 iterations so that it never starves a goroutine
// sharing the CPU; it ends when everyone has arrived, which each round
// guarantees.
type spinBarrier struct {
	n     int32
	count atomic.Int32
	gen   atomic.Uint32
}

func (b *spinBarrier) wait() {
	g := b.gen.Load()
	if b.count.Add(1) == b.n {
		b.count.Store(0)
		b.gen.Add(1)
		return
	}
	for i := 1; b.gen.Load() == g; i++ {
		if i%1024 == 0 {
			runtime.Gosched()
		}
	}
}

// Stress runs an owner and thieves against one deque for cfg.Rounds rounds.
// In each round the owner pushes cfg.PerRound fresh values; then everyone
// meets at a spin barrier and, at once, the owner pops until the deque is
// empty while each thief steals until it finds it empty; a second barrier
// ends the round. The race of the owner's last Pop against a thief's Steal
// is so exercised once per round. Loops are bounded: a thief gives up after
// 64 aborted steals in a round.
//
// GOMAXPROCS is set to the number of goroutines (owner + thieves) for the
// run and restored after. With cfg.Pinned each goroutine is locked to its
// own OS thread and that thread to its own CPU; it is an error to ask for
// more goroutines than CPUs then.
func Stress(cfg StressConfig) (StressResult, error) {
	rounds := orDefault(cfg.Rounds, 200)
	per := orDefault(cfg.PerRound, 1)
	capacity := orDefault(cfg.Capacity, 64)
	if per > capacity {
		return StressResult{}, fmt.Errorf("chaselev: %d elements per round exceed capacity %d", per, capacity)
	}
	cpus, err := CPUs()
	if err != nil {
		return StressResult{}, err
	}
	thieves := cfg.Thieves
	if thieves <= 0 {
		thieves = max(len(cpus)-1, 1)
	}
	n := thieves + 1
	var res StressResult
	if cfg.Pinned {
		if n > len(cpus) {
			return res, fmt.Errorf("chaselev: %d goroutines pinned on %d CPUs", n, len(cpus))
		}
		res.CPUs = cpus[:n]
	}
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	res.GOMAXPROCS = n

	var d *Deque
	if cfg.Racy {
		d = NewRacy(capacity)
	} else {
		d = New(capacity)
	}
	var clk Clock
	logs := make([]*Log, n)
	for i := range logs {
		logs[i] = NewLog(&clk, i)
	}
	bar := &spinBarrier{n: int32(n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.Pinned {
				unpin, err := Pin(res.CPUs[g])
				if err != nil {
					errs[g] = err
					// Keep meeting the barriers so the others finish.
				} else {
					defer unpin()
				}
			}
			l := logs[g]
			next := int64(1)
			for range rounds {
				if g == 0 {
					for range per {
						l.Push(d, next)
						next++
					}
				}
				bar.wait()
				if g == 0 {
					for l.Pop(d) != 0 {
					}
				} else {
					for aborts := 0; aborts < 64; {
						_, r := l.Steal(d)
						if r == Empty {
							break
						}
						if r == Abort {
							aborts++
						}
					}
				}
				bar.wait()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	seen := map[int64]int{}
	pushed := map[int64]bool{}
	for _, l := range logs {
		res.Ops = append(res.Ops, l.Ops()...)
		for _, op := range l.Ops() {
			switch {
			case op.Kind == OpPush && !op.Full:
				pushed[op.Value] = true
			case op.Kind != OpPush && op.Value != 0:
				seen[op.Value]++
				if seen[op.Value] == 2 {
					res.Duplicates = append(res.Duplicates, op.Value)
				}
			}
		}
	}
	for v := range pushed {
		if seen[v] == 0 {
			res.Lost = append(res.Lost, v)
		}
	}
	return res, nil
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
