package rtproc

import (
	"runtime"
	"testing"
)

// job records its runs on a channel and reports what it is told; it
// puts its worker back on pool first when it reports true.
type job struct {
	pool *Pool
	w    **Worker
	ok   bool
	ran  chan uintptr
	exit bool // call runtime.Goexit instead of returning
}

func (j *job) Run() bool {
	if j.exit {
		defer func() { j.ran <- 0 }()
		runtime.Goexit()
	}
	ok := j.ok && j.pool.Put(*j.w)
	j.ran <- (*j.w).GP()
	return ok
}

// A worker runs its jobs one after the other while they end well, on
// the same goroutine, and ends when one does not, or when it is drained.
func TestWorkerReused(t *testing.T) {
	var p Pool
	var w *Worker
	ran := make(chan uintptr, 1)
	w = Start(&job{pool: &p, w: &w, ok: true, ran: ran})
	w.Sem() <- struct{}{}
	first := <-ran
	if len(p.Free()) != 1 || first == 0 {
		t.Fatalf("after a job that ended well: %d free, goroutine %#x; want 1, nonzero", len(p.Free()), first)
	}
	w2 := p.Get(&job{pool: &p, w: &w, ok: false, ran: ran})
	if w2 != w || len(p.Free()) != 0 {
		t.Fatalf("Get returned %p (want %p), %d left free", w2, w, len(p.Free()))
	}
	w.Sem() <- struct{}{}
	if second := <-ran; second != first {
		t.Errorf("the second job ran on goroutine %#x, the first on %#x", second, first)
	}
	if len(p.Free()) != 0 || p.Get(nil) != nil {
		t.Error("a worker whose job ended badly is free")
	}
	// One that calls Goexit is not put back; a drained one ends.
	w = Start(&job{pool: &p, w: &w, exit: true, ran: ran})
	w.Sem() <- struct{}{}
	<-ran
	w = Start(&job{pool: &p, w: &w, ok: true, ran: ran})
	w.Sem() <- struct{}{}
	<-ran
	n := runtime.NumGoroutine()
	p.Drain()
	if len(p.Free()) != 0 {
		t.Fatal("free workers after Drain")
	}
	for range 1000 {
		if runtime.NumGoroutine() < n {
			return
		}
		runtime.Gosched()
	}
	t.Errorf("the drained worker's goroutine did not end: %d goroutines, %d before", runtime.NumGoroutine(), n)
}

// The free list holds MaxFree workers at most.
func TestPoolBound(t *testing.T) {
	var p Pool
	w := &Worker{}
	for range MaxFree {
		if !p.Put(w) {
			t.Fatal("Put refused below MaxFree")
		}
	}
	if p.Put(w) {
		t.Fatal("Put took one beyond MaxFree")
	}
}

// A grown stack is not reported shrunk; a goroutine's first stack is.
func TestStackShrunk(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("stack bounds are read on amd64 and arm64 only")
	}
	done := make(chan [2]bool)
	go func() {
		before := stackShrunk()
		growStack()
		done <- [2]bool{before, stackShrunk()}
	}()
	if got := <-done; got != [2]bool{true, false} {
		t.Errorf("shrunk before and after growStack: %v; want true, false", got)
	}
}
