package rtproc

import "github.com/execspec/execspec/internal/goid"

// Workers. A controlled goroutine runs on a worker, a runtime goroutine
// that runs one Job after the other: a worker whose job ended well goes
// on a Pool's free list and runs the next job it is given, with its
// stack already grown and its channel already made. A fresh goroutine
// costs the runtime's newproc, the growth of its stack (growStack) and
// its exit, and its channel an allocation: a pool suite's case starts
// about seventeen controlled goroutines and ends most of them well.
//
// What sees runtime goroutines rather than jobs sees workers: a stack
// shows the worker's loop below the job, and its "created by" line names
// the goroutine that made the worker; goid.Curg is the worker's, the
// same for each of its jobs; a runtime trace (runtime/trace) shows one
// goroutine running several jobs, and profiler labels are those of the
// goroutine that made the worker.

// A Job is what a worker runs. Run reports whether the worker may run
// another: the job ended well and put the worker back on its pool (Put)
// before it handed control on. A job that reports false leaves the
// worker to end: its goroutine returns (a job that calls runtime.Goexit
// ends it at once).
type Job interface{ Run() bool }

// Worker is a runtime goroutine that runs jobs. Its job is set by whoever
// holds control (Start, Get) before it is given control by a send on
// Sem, which orders them.
type Worker struct {
	sem  chan struct{}
	gp   uintptr // goid.Curg of its goroutine
	next Job     // nil: end
}

// Sem returns w's channel, of capacity 1: a send gives w control, and
// the first send after Start or Get starts its job.
func (w *Worker) Sem() chan struct{} { return w.sem }

// GP returns goid.Curg of w's goroutine, once it has run a job.
func (w *Worker) GP() uintptr { return w.gp }

// Start starts a worker, a new goroutine, that runs j once it is given
// control.
func Start(j Job) *Worker {
	w := &Worker{sem: make(chan struct{}, 1), next: j}
	go w.loop()
	return w
}

func (w *Worker) loop() {
	growStack()
	w.gp = goid.Curg()
	for {
		<-w.sem
		j := w.next
		if j == nil {
			return
		}
		w.next = nil
		if stackShrunk() {
			growStack()
		}
		if !j.Run() {
			return
		}
	}
}

// MaxFree bounds the free list of a Pool (a worker keeps its stack,
// 16 KiB once grown).
const MaxFree = 1024

// Pool is a free list of workers. The zero Pool is empty. It is used by
// one goroutine at a time, ordered by the handovers of control.
type Pool struct {
	free []*Worker
}

// Get returns a free worker that runs j once it is given control, or nil
// if none is free.
func (p *Pool) Get(j Job) *Worker {
	n := len(p.free)
	if n == 0 {
		return nil
	}
	w := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	w.next = j
	return w
}

// Put puts w, whose job is ending well, on the free list, and reports
// whether it did (not when the list holds MaxFree).
func (p *Pool) Put(w *Worker) bool {
	if len(p.free) >= MaxFree {
		return false
	}
	p.free = append(p.free, w)
	return true
}

// Free returns the free workers, the last freed last; the caller must
// not change it.
func (p *Pool) Free() []*Worker { return p.free }

// Drain ends the free workers (their goroutines return); the pool is
// empty after.
func (p *Pool) Drain() {
	for _, w := range p.free {
		w.next = nil
		w.sem <- struct{}{}
	}
	p.free = nil
}
