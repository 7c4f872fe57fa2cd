package executor

import (
	"flag"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/traces"
)

var (
	benchTasks  = flag.Int("tasks", 10000, "tasks per iteration of BenchmarkSpawn")
	benchRounds = flag.Int("rounds", 10000, "round trips per iteration of BenchmarkPingPong")
)

// ringRecorder is the cheapest useful recorder: it stores every event's
// fields in a preallocated ring (overwriting the oldest), one ring per
// worker and one for events from outside. An event with Worker w ≥ 0 is
// recorded by worker w's own goroutine (the built-in executors guarantee
// it), so its ring needs no atomic; the outside ring, written by any
// goroutine, takes one atomic add. It keeps every field but Detail (the
// text of a panic), so that a slot holds no pointer and a store needs no
// write barrier. It allocates nothing.
type ringRecorder struct {
	outside ringShard
	workers [8]ringShard
}

// slimEvent is a traces.Event without its Detail.
type slimEvent struct {
	seq, call, ret uint64
	task           int64
	worker, victim int32
	queue          traces.Queue
	kind           traces.Kind
	source         traces.Source
	result         traces.Result
	outcome        traces.Outcome
}

type ringShard struct {
	n    atomic.Uint64 // the outside ring's index
	i    uint64        // a worker ring's index, written by its worker only
	_    [48]byte
	buf  [1 << 8]slimEvent
	_pad [64]byte
}

func slim(e *traces.Event) slimEvent {
	return slimEvent{e.Seq, e.Call, e.Return, e.Task, e.Worker, e.Victim, e.Queue, e.Kind, e.Source, e.Result, e.Outcome}
}

func (r *ringRecorder) Record(e traces.Event) {
	if e.Worker < 0 {
		i := r.outside.n.Add(1)
		r.outside.buf[i&(uint64(len(r.outside.buf))-1)] = slim(&e)
		return
	}
	s := &r.workers[int(e.Worker)%len(r.workers)]
	s.i++
	s.buf[s.i&(uint64(len(s.buf))-1)] = slim(&e)
}

type benchExec struct {
	name string
	new  func() Executor
}

func benchExecs() []benchExec {
	return []benchExec{
		{"worksteal", func() Executor { return NewWorkSteal(WorkStealConfig{}) }},
		{"worksteal_recorded", func() Executor {
			e := NewWorkSteal(WorkStealConfig{})
			e.SetRecorder(&ringRecorder{})
			return e
		}},
		{"fifo", func() Executor { return NewFIFO() }},
		{"wakeable", func() Executor { return NewWakeable(2) }},
	}
}

var trivial Future = FutureFunc(func(*Context) (any, bool) { return nil, true })

// BenchmarkSpawn: spawn → poll → complete of -tasks trivial tasks per
// iteration, from outside the executor, then Wait; against go + WaitGroup.
// The ns/task metric is the per-task cost.
func BenchmarkSpawn(b *testing.B) {
	n := *benchTasks
	for _, be := range benchExecs() {
		b.Run(be.name, func(b *testing.B) {
			ex := be.new()
			defer ex.Close()
			b.ReportAllocs()
			start := time.Now()
			iters := 0
			for b.Loop() {
				for range n {
					if _, err := ex.Spawn(trivial); err != nil {
						b.Fatal(err)
					}
				}
				if err := ex.Wait(); err != nil {
					b.Fatal(err)
				}
				iters++
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*n), "ns/task")
		})
	}
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		var sink atomic.Int64
		start := time.Now()
		iters := 0
		for b.Loop() {
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					sink.Add(1)
					wg.Done()
				}()
			}
			wg.Wait()
			iters++
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*n), "ns/task")
	})
}

// pingPong is two tasks that take turns, each waking the other, for a
// number of rounds.
type pingPong struct {
	turn   atomic.Int64
	rounds int64
	w      [2]atomic.Pointer[Waker]
}

func (p *pingPong) task(me int64) Future {
	return FutureFunc(func(cx *Context) (any, bool) {
		if p.w[me].Load() == nil {
			w := cx.Waker()
			p.w[me].Store(&w)
		}
		for {
			t := p.turn.Load()
			if t >= 2*p.rounds {
				if o := p.w[1-me].Load(); o != nil {
					o.Wake()
				}
				return nil, true
			}
			if t%2 != me {
				return nil, false
			}
			p.turn.Store(t + 1)
			if o := p.w[1-me].Load(); o != nil {
				o.Wake()
			}
		}
	})
}

// BenchmarkPingPong: a wake ping-pong between two tasks, -rounds round
// trips per iteration; against two goroutines and unbuffered channels. The
// ns/round metric is one round trip (two wakes, two polls).
func BenchmarkPingPong(b *testing.B) {
	r := *benchRounds
	for _, be := range benchExecs() {
		b.Run(be.name, func(b *testing.B) {
			ex := be.new()
			defer ex.Close()
			b.ReportAllocs()
			start := time.Now()
			iters := 0
			for b.Loop() {
				p := &pingPong{rounds: int64(r)}
				ex.Spawn(p.task(0))
				ex.Spawn(p.task(1))
				if err := ex.Wait(); err != nil {
					b.Fatal(err)
				}
				iters++
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*r), "ns/round")
		})
	}
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		start := time.Now()
		iters := 0
		for b.Loop() {
			ping, pong := make(chan struct{}), make(chan struct{})
			done := make(chan struct{})
			go func() {
				for range r {
					<-ping
					pong <- struct{}{}
				}
				close(done)
			}()
			for range r {
				ping <- struct{}{}
				<-pong
			}
			<-done
			iters++
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*r), "ns/round")
	})
}

// TestPollAllocs: once a task is spawned, waking it and polling it again
// allocates nothing, recorded or not, on every built-in executor but
// Monitored (which wraps each future once, at spawn, and then allocates
// nothing per poll either).
func TestPollAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need a quiet process")
	}
	for _, name := range BuiltinNames() {
		for _, recorded := range []bool{false, true} {
			newEx, _ := Builtin(name)
			ex := newEx()
			if recorded {
				var r Reporter = ex.(Reporter)
				r.SetRecorder(&ringRecorder{})
			}
			polled := make(chan struct{}, 1)
			var wk atomic.Pointer[Waker]
			stop := atomic.Bool{}
			h, _ := ex.Spawn(FutureFunc(func(cx *Context) (any, bool) {
				if stop.Load() {
					return nil, true
				}
				if wk.Load() == nil {
					w := cx.Waker()
					wk.Store(&w)
				}
				polled <- struct{}{}
				return nil, false
			}))
			<-polled
			w := wk.Load()
			allocs := testing.AllocsPerRun(2000, func() {
				w.Wake()
				<-polled
			})
			stop.Store(true)
			w.Wake()
			h.Join()
			ex.Close()
			if allocs != 0 {
				t.Errorf("%s (recorded %v): %.2f allocations per wake and poll, want 0", name, recorded, allocs)
			}
		}
	}
}

// BenchmarkSideBySide runs, in every iteration, one batch of -tasks trivial
// tasks on plain goroutines, on WorkSteal, on WorkSteal with the ring
// recorder and on WorkSteal with a recorder that discards events, in an
// order that rotates, so that all see the same machine load; it reports
// each one's median ns/task and the median ratios the goals are stated in:
// worksteal/goroutines (goal ≤ 2) and recorded/worksteal (goal ≤ 1.3).
func BenchmarkSideBySide(b *testing.B) {
	n := *benchTasks
	plain := NewWorkSteal(WorkStealConfig{})
	recd := NewWorkSteal(WorkStealConfig{})
	recd.SetRecorder(&ringRecorder{})
	nop := NewWorkSteal(WorkStealConfig{})
	nop.SetRecorder(nopRecorder{})
	defer plain.Close()
	defer recd.Close()
	defer nop.Close()
	batch := func(ex Executor) time.Duration {
		start := time.Now()
		for range n {
			if _, err := ex.Spawn(trivial); err != nil {
				b.Fatal(err)
			}
		}
		if err := ex.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var sink atomic.Int64
	goBatch := func() time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				sink.Add(1)
				wg.Done()
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	// Medians over the iterations, not sums: a burst of load from other
	// processes hits one batch, and a median ignores it.
	var tg, tw, tr, rg, rr, rn []float64
	i := 0
	for b.Loop() {
		// Rotate the order, so that no variant always runs after another
		// (a batch leaves garbage and parked workers behind).
		var d [4]time.Duration
		for k := range 4 {
			switch j := (i + k) % 4; j {
			case 0:
				d[j] = goBatch()
			case 1:
				d[j] = batch(plain)
			case 2:
				d[j] = batch(recd)
			case 3:
				d[j] = batch(nop)
			}
		}
		i++
		g, w, r, z := d[0], d[1], d[2], d[3]
		tg, tw, tr = append(tg, float64(g)), append(tw, float64(w)), append(tr, float64(r))
		rg, rr, rn = append(rg, float64(w)/float64(g)), append(rr, float64(r)/float64(w)), append(rn, float64(z)/float64(w))
	}
	per := func(d float64) float64 { return d / float64(n) }
	b.ReportMetric(per(median(tg)), "go-ns/task")
	b.ReportMetric(per(median(tw)), "ws-ns/task")
	b.ReportMetric(per(median(tr)), "rec-ns/task")
	b.ReportMetric(median(rg), "ws/go")
	b.ReportMetric(median(rr), "rec/ws")
	b.ReportMetric(median(rn), "nop/ws")
}

// nopRecorder discards events: what recording costs the executor itself,
// without the recorder's own work.
type nopRecorder struct{}

func (nopRecorder) Record(traces.Event) {}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
