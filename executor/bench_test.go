package executor

import (
	"flag"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execspec/execspec/internal/testenv"
	"github.com/execspec/execspec/traces"
)

var (
	benchTasks  = flag.Int("tasks", 10000, "tasks per iteration of BenchmarkSpawn")
	benchRounds = flag.Int("rounds", 10000, "round trips per iteration of BenchmarkPingPong")
)

// ringRecorder is the cheapest useful recorder, a flight recorder: a
// BatchRecorder that copies every batch into a preallocated ring of packed
// events (overwriting the oldest), one ring per worker and one for events
// from outside, each under a mutex taken once per batch (a batch is one
// worker's, or from outside). It allocates nothing.
type ringRecorder struct {
	rings [9]ring
}

type ring struct {
	mu  sync.Mutex
	n   int
	buf [1 << 12]traces.Packed
	_   [64]byte
}

func (r *ringRecorder) RecordPacked(batch []traces.Packed) {
	if len(batch) == 0 {
		return
	}
	g := &r.rings[int(batch[0].Worker()+1)%len(r.rings)]
	g.mu.Lock()
	for len(batch) > 0 {
		k := copy(g.buf[g.n%len(g.buf):], batch)
		g.n += k
		batch = batch[k:]
	}
	g.mu.Unlock()
}

func (r *ringRecorder) Record(e traces.Event) {
	p, _ := traces.Pack(e)
	r.RecordPacked([]traces.Packed{p})
}

// emptyLog empties r if it is a traces.Log, after a batch of tasks, so
// that a long benchmark does not keep every event it ever made.
func emptyLog(r Recorder) {
	if l, ok := r.(*traces.Log); ok {
		l.Reset()
	}
}

type benchExec struct {
	name string
	new  func() Executor
	rec  func() Recorder // nil: not recorded
}

// make returns a new executor and its recorder, if any.
func (be benchExec) make() (Executor, Recorder) {
	ex := be.new()
	if be.rec == nil {
		return ex, nil
	}
	r := be.rec()
	ex.(Reporter).SetRecorder(r)
	return ex, r
}

func benchExecs() []benchExec {
	ws := func() Executor { return NewWorkSteal(WorkStealConfig{}) }
	return []benchExec{
		{"worksteal", ws, nil},
		{"worksteal_recorded", ws, func() Recorder { return &ringRecorder{} }},
		{"worksteal_log", ws, func() Recorder { return new(traces.Log) }},
		{"fifo", func() Executor { return NewFIFO() }, nil},
		{"wakeable", func() Executor { return NewWakeable(2) }, nil},
		// The executors that record what format v1.1 adds (priorities,
		// future ids), into a Log; and priority unrecorded, for its queue.
		{"priority", func() Executor { return NewPriority(PriorityConfig{Workers: 2}) }, nil},
		{"priority_log", func() Executor { return NewPriority(PriorityConfig{Workers: 2}) }, func() Recorder { return new(traces.Log) }},
		{"retry_log", func() Executor { return NewRetry(RetryConfig{Workers: 2}) }, func() Recorder { return new(traces.Log) }},
	}
}

// eachExec runs a sub-benchmark per executor of benchExecs, on one
// executor of that kind: each iteration is one batch (n units for the
// unit's metric, as perUnit counts them), then the recorder's log, if
// any, is emptied.
func eachExec(b *testing.B, n int, unit string, batch func(b *testing.B, ex Executor)) {
	for _, be := range benchExecs() {
		b.Run(be.name, func(b *testing.B) {
			ex, rec := be.make()
			defer ex.Close()
			perUnit(b, n, unit, func() {
				batch(b, ex)
				emptyLog(rec)
			})
		})
	}
}

// goroutineBatch is the yardstick of a batch of n trivial tasks: n
// goroutines that each add to sink, and a WaitGroup to wait for them.
func goroutineBatch(n int, sink *atomic.Int64) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			sink.Add(1)
			wg.Done()
		}()
	}
	wg.Wait()
}

var trivial Future = FutureFunc(func(*Context) (any, bool) { return nil, true })

// BenchmarkSpawn: spawn → poll → complete of -tasks trivial tasks per
// iteration, from outside the executor, then Wait; against go + WaitGroup.
// The ns/task metric is the per-task cost.
func BenchmarkSpawn(b *testing.B) {
	n := *benchTasks
	eachExec(b, n, "ns/task", func(b *testing.B, ex Executor) { spawnBatch(b, ex, n) })
	b.Run("goroutines", func(b *testing.B) {
		var sink atomic.Int64
		perUnit(b, n, "ns/task", func() { goroutineBatch(n, &sink) })
	})
}

// perUnit runs body in b's loop and reports the time per unit of work,
// body doing units of it per call.
func perUnit(b *testing.B, units int, metric string, body func()) {
	b.ReportAllocs()
	start := time.Now()
	iters := 0
	for b.Loop() {
		body()
		iters++
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*units), metric)
}

// spawnBatch spawns n trivial tasks on ex from outside and waits for them.
func spawnBatch(b *testing.B, ex Executor, n int) {
	for range n {
		if _, err := ex.Spawn(trivial); err != nil {
			b.Fatal(err)
		}
	}
	if err := ex.Wait(); err != nil {
		b.Fatal(err)
	}
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
	eachExec(b, r, "ns/round", func(b *testing.B, ex Executor) {
		p := &pingPong{rounds: int64(r)}
		ex.Spawn(p.task(0))
		ex.Spawn(p.task(1))
		if err := ex.Wait(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("goroutines", func(b *testing.B) {
		perUnit(b, r, "ns/round", func() {
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
		})
	})
}

// TestPollAllocs: once a task is spawned, waking it and polling it again
// allocates nothing, recorded or not, on every built-in executor but
// Monitored (which wraps each future once, at spawn, and then allocates
// nothing per poll either).
func TestPollAllocs(t *testing.T) {
	testenv.Slow(t, "allocation counts need a quiet process")
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
// tasks on plain goroutines, on WorkSteal, on WorkSteal recording into the
// ring recorder and on WorkSteal recording into a traces.Log (emptied after
// each batch), in an order that rotates, so that all see the same machine
// load; it reports each one's median ns/task and the median ratios the
// goals are stated in: worksteal/goroutines (goal ≤ 2) and recorded/worksteal
// (goal ≤ 1.3).
func BenchmarkSideBySide(b *testing.B) {
	n := *benchTasks
	plain := NewWorkSteal(WorkStealConfig{})
	ring := NewWorkSteal(WorkStealConfig{})
	ring.SetRecorder(&ringRecorder{})
	log := new(traces.Log)
	logged := NewWorkSteal(WorkStealConfig{})
	logged.SetRecorder(log)
	defer plain.Close()
	defer ring.Close()
	defer logged.Close()
	batch := func(ex Executor) time.Duration {
		start := time.Now()
		spawnBatch(b, ex, n)
		if ex == logged {
			if log.Len() < 4*n { // 4 per task, and parks
				b.Fatalf("the log holds %d events, want at least %d", log.Len(), 4*n)
			}
			log.Reset()
		}
		return time.Since(start)
	}
	var sink atomic.Int64
	goBatch := func() time.Duration {
		start := time.Now()
		goroutineBatch(n, &sink)
		return time.Since(start)
	}
	// Medians over the iterations, not sums: a burst of load from other
	// processes hits one batch, and a median ignores it.
	var tg, tw, tr, tl, rg, rr, rl []float64
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
				d[j] = batch(ring)
			case 3:
				d[j] = batch(logged)
			}
		}
		i++
		g, w, r, l := float64(d[0]), float64(d[1]), float64(d[2]), float64(d[3])
		tg, tw, tr, tl = append(tg, g), append(tw, w), append(tr, r), append(tl, l)
		rg, rr, rl = append(rg, w/g), append(rr, r/w), append(rl, l/w)
	}
	per := func(d float64) float64 { return d / float64(n) }
	b.ReportMetric(per(median(tg)), "go-ns/task")
	b.ReportMetric(per(median(tw)), "ws-ns/task")
	b.ReportMetric(per(median(tr)), "rec-ns/task")
	b.ReportMetric(per(median(tl)), "log-ns/task")
	b.ReportMetric(median(rg), "ws/go")
	b.ReportMetric(median(rr), "rec/ws")
	b.ReportMetric(median(rl), "log/ws")
	b.ReportMetric(slices.Min(tr)/slices.Min(tw), "minrec/minws")
	b.ReportMetric(slices.Min(tl)/slices.Min(tw), "minlog/minws")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
