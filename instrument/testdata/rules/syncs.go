package syncs

import (
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

type counter struct {
	sync.RWMutex
	n int
}

// spin is a spin lock whose backoff is a loop that only yields, as
// ants' is (rule goschedloop).
type spin int32

func (s *spin) Lock() {
	backoff := 1
	for !atomic.CompareAndSwapInt32((*int32)(s), 0, 1) {
		for i := 0; i < backoff; i++ {
			runtime.Gosched()
		}
		if backoff < 16 {
			backoff <<= 1
		}
	}
}

func (s *spin) Unlock() { atomic.StoreInt32((*int32)(s), 0) }

// Program uses the sync types, atomics, Gosched, GOMAXPROCS, NumGoroutine
// and Sleep.
func Program() string {
	base := runtime.NumGoroutine()
	var c counter
	var once sync.Once
	var wg sync.WaitGroup
	var hits atomic.Int32
	var spins int64
	inits := 0
	mu := &sync.Mutex{}
	cond := sync.NewCond(mu)
	ready := false
	var sp spin
	locked := 0
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp.Lock()
			locked++
			sp.Unlock()
			once.Do(func() { inits++ })
			c.Lock()
			c.n++
			c.Unlock()
			c.RLock()
			_ = c.n
			c.RUnlock()
			hits.Add(1)
			atomic.AddInt64(&spins, 1)
			runtime.Gosched()
			mu.Lock()
			for !ready {
				cond.Wait()
			}
			mu.Unlock()
		}()
	}
	time.Sleep(time.Millisecond)
	fired := make(chan int)
	time.AfterFunc(time.Millisecond, func() {
		mu.Lock()
		inits += 10
		mu.Unlock()
		fired <- 1
	})
	<-fired
	for atomic.LoadInt64(&spins) < 3 {
		runtime.Gosched()
	}
	// A spin loop of the method form (rule spincas): it waits for hits
	// to be 3.
	for !hits.CompareAndSwap(3, 3) {
		runtime.Gosched()
	}
	// Not one the rule takes: the tries it counts are used after it.
	tries := 0
	for !atomic.CompareAndSwapInt64(&spins, 3, 3) {
		tries++
	}
	if tries < 0 {
		return "negative tries"
	}
	// Not a loop that only yields: its bound is a variable a closure
	// captures (another goroutine could change it).
	rounds := 2
	grow := func() { rounds++ }
	for i := 0; i < rounds; i++ {
		runtime.Gosched()
	}
	grow()
	mu.Lock()
	ready = true
	cond.Broadcast()
	mu.Unlock()
	wg.Wait()
	atomic.StoreInt64(&spins, 0)
	if d := rand.Intn(10); d < 0 || d >= 10 {
		return "rand out of range"
	}
	// A leak check: the goroutines it started are gone (rule
	// numgoroutine: under control, the parked runtime goroutines that
	// will run later goroutines are not counted).
	for runtime.NumGoroutine() > base {
		runtime.Gosched()
	}
	// Under control the process runs on one P; the program sees the
	// value it had (rule gomaxprocs).
	procs := runtime.GOMAXPROCS(0)
	return fmt.Sprint(c.n, inits, hits.Load(), spins, locked, rounds, procs)
}
