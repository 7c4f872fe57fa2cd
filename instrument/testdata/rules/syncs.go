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

// Program uses the sync types, atomics, Gosched and Sleep.
func Program() string {
	var c counter
	var once sync.Once
	var wg sync.WaitGroup
	var hits atomic.Int32
	var spins int64
	inits := 0
	mu := &sync.Mutex{}
	cond := sync.NewCond(mu)
	ready := false
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
	mu.Lock()
	ready = true
	cond.Broadcast()
	mu.Unlock()
	wg.Wait()
	atomic.StoreInt64(&spins, 0)
	if d := rand.Intn(10); d < 0 || d >= 10 {
		return "rand out of range"
	}
	return fmt.Sprint(c.n, inits, hits.Load(), spins)
}
