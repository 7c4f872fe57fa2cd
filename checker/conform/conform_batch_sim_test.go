package conform_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// cbSim simulates crossbeam-deque 0.8.1's batch steal
// (Stealer::steal_batch_and_pop, src/deque.rs) in an executor recorded as
// examples/rust/crossbeam-exec records it, goroutine-free: W workers, each
// with a deque (both ends LIFO, or both FIFO), one outside thread pushing
// onto a global queue. Each atomic action of the library is one step, and
// the threads' steps are interleaved at random, a thread now and then
// stopped for a while (as the OS stops a thread):
//
//   - a take's call tick is drawn before the search (own deque, global
//     queue, each other worker from w+1 on, a Retry trying the same victim
//     again), its ret after the task is in hand;
//   - a batch steal reads the victim's front and back (its length), then
//     moves 1 + min((len-1)/2, 31) tasks from the head: from a FIFO deque
//     with one CAS, which fails (Retry) if the front moved since the read,
//     the first task run; from a LIFO deque one CAS per task, the first
//     failing as above, each later one ending the batch when the front
//     moved or the deque is empty, the last task run; the tasks moved are
//     published in the thief's deque (one store of its back) before the
//     steal returns;
//   - the owner's pop from a FIFO deque moves the front, and so does its
//     pop of a LIFO deque's last task (a CAS); its other LIFO pops and its
//     pushes touch only the back.
//
// The trace of a correct run must conform, but for a known few
// (cbKnown); a batch longer than the library allows must not. The
// interleavings are far denser than a real executor's: every step may
// come between any two of another thread.
type cbSim struct {
	rng     *rand.Rand
	clock   uint64
	W       int
	fifo    bool
	tasks   int // outside pushes
	kids    int // budget of tasks spawned by polls
	global  []int64
	local   [][]int64
	front   []int // by worker: how many times its deque's front moved
	next    int64
	threads []*cbThread
	events  []traces.Event
	mut     bool // one batch steal takes every task of a deque of 3 or more
	stall   int  // a thread is stopped now and then for up to stall steps per thread
	mutated bool
}

type cbThread struct {
	w      int // worker, or -1: the outside thread
	left   int // outside pushes left
	sleep  int // steps to sit out
	st     int // what the thread does next (cb* below)
	call   uint64
	task   int64 // the task in hand
	pushed int64 // the task being pushed
	mutant bool  // this batch steal is the mutant's
	k      int   // victim index (1..W-1) of the search
	v      int   // the victim
	seen   int   // the victim's front count at the read (or the last CAS)
	size   int   // the batch's bound: tasks still to take after the first
	batch  []int64
	src    traces.Source
	done   bool
	pushTo traces.Queue
	det    string // a batch steal's event detail: the tasks it moved
}

const (
	cbIdle    = iota // begin a take: draw its call, pop the own deque
	cbGlobal         // steal from the global queue
	cbRead           // read the next victim's front and back
	cbCAS            // the batch's (first) CAS
	cbMore           // LIFO: the CAS of the next task of the batch
	cbPublish        // store the thief's back: the batch is visible
	cbRet            // the task in hand: draw ret, record the take
	cbPoll           // poll-begin
	cbPolling        // spawn a child, or poll-end
	cbPushed         // a push done: draw its ret, record it
)

func newCBSim(seed uint64, fifo, mut bool) *cbSim {
	r := rand.New(rand.NewPCG(seed, 0xcb))
	s := &cbSim{rng: r, W: 2 + r.IntN(3), fifo: fifo, tasks: 4 + r.IntN(8), kids: 40 + r.IntN(60), mut: mut, stall: cbStall}
	s.local = make([][]int64, s.W)
	s.front = make([]int, s.W)
	for w := range s.W {
		s.threads = append(s.threads, &cbThread{w: w})
	}
	s.threads = append(s.threads, &cbThread{w: -1, left: s.tasks})
	return s
}

func (s *cbSim) header() traces.Header {
	cfg := map[string]int{"owner-lifo": 1, "steal-half": 1, "steal-last": 1, "steal-max": 32}
	if s.fifo {
		cfg = map[string]int{"owner-lifo": 0, "steal-half": 1, "steal-max": 32}
	}
	return traces.Header{Format: traces.Format, Version: traces.Version, Minor: 1, Order: traces.OrderIntervals,
		Executor: "cbsim", Workers: s.W, Policy: "worksteal", Config: cfg}
}

func (s *cbSim) tick() uint64 { s.clock++; return s.clock }

func (s *cbSim) run() {
	for steps := 0; steps < 2_000_000 && !s.finished(); steps++ {
		th := s.threads[s.rng.IntN(len(s.threads))]
		switch {
		case th.done:
		case th.sleep > 0:
			th.sleep--
		case s.mut && !s.mutated && s.mutantDue(th):
			// The mutant's take runs alone, overlapping nothing: a
			// batch longer than half cannot be told from half of a
			// deque that pushes made longer within its interval.
			th.mutant = true
			for s.step(th); th.st != cbPoll; s.step(th) {
			}
		default:
			s.step(th)
			if s.stall > 0 && s.rng.IntN(40) == 0 {
				th.sleep = s.rng.IntN(s.stall * len(s.threads))
			}
		}
	}
	slices.SortFunc(s.events, func(a, b traces.Event) int { return int(a.Seq) - int(b.Seq) })
}

func (s *cbSim) finished() bool {
	for _, th := range s.threads {
		if th.w < 0 && !th.done || th.w >= 0 && th.st != cbIdle {
			return false
		}
	}
	return queuesEmpty(s.global, s.local)
}

// queuesEmpty reports whether the simulated global queue and every local
// queue are empty.
func queuesEmpty(global []int64, local [][]int64) bool {
	if len(global) > 0 {
		return false
	}
	for _, q := range local {
		if len(q) > 0 {
			return false
		}
	}
	return true
}

// mutantDue reports whether worker thread th may run the mutant's take
// now: it is about to begin a take, no other thread is inside a queue
// operation, its own deque and the global queue are empty, and the first
// victim it will look at holds three tasks or more.
func (s *cbSim) mutantDue(th *cbThread) bool {
	if th.w < 0 || th.st != cbIdle || len(s.local[th.w]) > 0 || len(s.global) > 0 {
		return false
	}
	for _, o := range s.threads {
		if o != th && o.st != cbIdle && o.st != cbPoll && o.st != cbPolling {
			return false
		}
	}
	return len(s.local[(th.w+1)%s.W]) >= 3
}

// takeHead removes the head of v's deque (a steal's CAS).
func (s *cbSim) takeHead(v int) int64 {
	t := s.local[v][0]
	s.local[v] = s.local[v][1:]
	s.front[v]++
	return t
}

// push starts a push of t by th onto q; the next steps land it, then
// record it.
func (s *cbSim) push(th *cbThread, t int64, q traces.Queue) {
	th.call, th.pushed, th.pushTo = s.tick(), t, q
	if q == traces.QueueGlobal {
		s.global = append(s.global, t)
	} else {
		s.local[th.w] = append(s.local[th.w], t)
	}
	th.st = cbPushed
}

func (s *cbSim) step(th *cbThread) {
	w := th.w
	switch th.st {
	case cbPushed:
		ret := s.tick()
		s.events = append(s.events, traces.Event{Kind: traces.KindSpawn, Seq: th.call, Call: th.call, Return: ret, Task: th.pushed, Worker: int32(w), Victim: -1, Queue: th.pushTo})
		th.pushed = 0
		th.st = cbIdle
		if w >= 0 {
			th.st = cbPolling
		}
	case cbIdle:
		if w < 0 {
			if th.left == 0 {
				th.done = true
				return
			}
			th.left--
			s.next++
			s.push(th, s.next, traces.QueueGlobal)
			return
		}
		th.call = s.tick()
		th.st = cbGlobal
		if q := s.local[w]; len(q) > 0 {
			if s.fifo {
				th.task = s.takeHead(w)
			} else {
				th.task, s.local[w] = q[len(q)-1], q[:len(q)-1]
				if len(q) == 1 {
					s.front[w]++ // the pop of the last task is a CAS of the front
				}
			}
			th.src, th.st = traces.SourceLocal, cbRet
		}
	case cbGlobal:
		if len(s.global) > 0 {
			th.task, s.global = s.global[0], s.global[1:]
			th.src, th.st = traces.SourceGlobal, cbRet
			return
		}
		th.k, th.st = 1, cbRead
	case cbRead:
		if th.k == s.W {
			th.st = cbIdle // nothing found: no event; look again later
			return
		}
		th.v = (w + th.k) % s.W
		n := len(s.local[th.v])
		if n == 0 {
			th.k++
			return
		}
		th.seen, th.size = s.front[th.v], min((n-1)/2, 31)
		if th.mutant {
			th.size = n - 1 // the whole deque
		}
		th.st = cbCAS
	case cbCAS:
		if s.front[th.v] != th.seen || len(s.local[th.v]) == 0 {
			th.st = cbRead // Retry: the same victim again
			return
		}
		if th.mutant {
			s.mutated, th.mutant = true, false
		}
		th.batch = th.batch[:0]
		if s.fifo {
			// One CAS moves the head and the batch after it: the front
			// did not move since the read, so they are all there.
			th.task = s.takeHead(th.v)
			for range th.size {
				th.batch = append(th.batch, s.takeHead(th.v))
			}
			th.seen, th.st = s.front[th.v], cbPublish
			return
		}
		th.task = s.takeHead(th.v)
		th.seen, th.st = s.front[th.v], cbMore
	case cbMore:
		if th.size == 0 || len(s.local[th.v]) == 0 || s.front[th.v] != th.seen {
			th.st = cbPublish
			return
		}
		th.batch = append(th.batch, th.task)
		th.task = s.takeHead(th.v)
		th.seen = s.front[th.v]
		th.size--
	case cbPublish:
		th.det = fmt.Sprint("moved ", th.batch) // the truth, for a dumped trace's reader
		s.local[w] = append(s.local[w], th.batch...)
		th.batch = th.batch[:0]
		th.src, th.st = traces.SourceSteal, cbRet
	case cbRet:
		ret := s.tick()
		e := traces.Event{Kind: traces.KindTake, Seq: ret, Call: th.call, Return: ret, Task: th.task, Worker: int32(w), Victim: -1, Source: th.src}
		if th.src == traces.SourceSteal {
			e.Victim = int32(th.v)
			e.Detail = th.det
		}
		s.events = append(s.events, e)
		th.st = cbPoll
	case cbPoll:
		seq := s.tick()
		s.events = append(s.events, traces.Event{Kind: traces.KindPollBegin, Seq: seq, Task: th.task, Worker: int32(w), Victim: -1})
		th.st = cbPolling
	case cbPolling:
		if th.task == 0 {
			panic("cbsim: polling no task")
		}
		if s.kids > 0 && s.rng.IntN(2) == 0 {
			s.kids--
			s.next++
			s.push(th, s.next, traces.LocalQueue(w))
			return
		}
		seq := s.tick()
		s.events = append(s.events, traces.Event{Kind: traces.KindPollEnd, Seq: seq, Task: th.task, Worker: int32(w), Victim: -1, Result: traces.ResultReady})
		th.task, th.st = 0, cbIdle
	}
}

// cbSeeds is how many runs each test simulates, with a thread stopped now
// and then for up to cbStall steps per thread.
const (
	cbSeeds = 500
	cbStall = 60
)

// cbKnown is how many of cbSeeds simulated correct runs the checker still
// flags (LIFO, FIFO): interleavings denser than a real executor's, where
// the reading of a batch that would conform lies outside the search's
// readings (conform_interval_batch_search.go). Was 13 and 14 before the
// search, 1 and 4 before the claims over a thief's own tasks (LIFO), with
// claimed tasks in front and longer (FIFO), and the tasks a FIFO batch is
// shown to have moved placed behind the thief's own (ivBatchPrefix). The
// test fails if more are flagged.
var cbKnown = map[bool]int{false: 0, true: 0}

// TestBatchSimFalseAlarms: simulated runs of crossbeam's batch steals
// (LIFO and FIFO deques) conform, but for a known few (cbKnown).
func TestBatchSimFalseAlarms(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		flagged := 0
		for seed := range uint64(cbSeeds) {
			s := newCBSim(seed, fifo, false)
			s.run()
			if !s.finished() {
				t.Fatalf("fifo %v seed %d: the simulation did not finish", fifo, seed)
			}
			r := ivCheck(s.header(), s.events)
			if r.Verdict != checker.Holds {
				if dir := os.Getenv("CBSIM_DUMP"); dir != "" {
					if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cb-%v-%d.txt", fifo, seed))); err == nil {
						traces.WriteText(f, s.header(), s.events)
						f.Close()
					}
				}
				flagged++
			}
		}
		t.Logf("fifo %v: %d of %d correct runs flagged (known: %d)", fifo, flagged, cbSeeds, cbKnown[fifo])
		if flagged > cbKnown[fifo] {
			t.Errorf("fifo %v: %d of %d correct runs flagged, more than the %d known", fifo, flagged, cbSeeds, cbKnown[fifo])
		}
	}
}

// TestBatchSimMutant: a batch steal that takes the whole deque (three
// tasks or more) is flagged: Violated, once the search over readings
// has tried every reading within its bounds (never Unknown).
func TestBatchSimMutant(t *testing.T) {
	seeds := uint64(cbSeeds)
	if raceExt {
		// Each mutant is flagged only after the search tried every
		// reading within its bounds (hundreds of replays): a tenth of
		// the runs under the race detector.
		seeds /= 10
	}
	for _, fifo := range []bool{false, true} {
		runs, missed, unknown := 0, 0, 0
		for seed := range seeds {
			s := newCBSim(seed, fifo, true)
			s.run()
			if !s.mutated {
				continue
			}
			runs++
			switch r := ivCheck(s.header(), s.events); r.Verdict {
			case checker.Holds:
				missed++
			case checker.Unknown:
				unknown++
			}
		}
		t.Logf("fifo %v: %d of %d mutated runs missed, %d unknown", fifo, missed, runs, unknown)
		if runs == 0 || missed > 0 || unknown > 0 {
			t.Errorf("fifo %v: %d of %d runs with a whole-deque batch not flagged, %d unknown (the search over readings spent its budget)", fifo, missed, runs, unknown)
		}
	}
}

// TestBatchSimSearched: the simulated runs kept under testdata
// (batch_search_*_sim_*.txt) hold because the search over readings read
// an earlier batch steal otherwise; the hand-made broken batches are
// flagged after it tried every reading within its bounds.
func TestBatchSimSearched(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conform", "batch_search_*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no batch_search traces: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for strings.HasPrefix(string(data), "//") { // the want line and the comments
				_, rest, _ := strings.Cut(string(data), "\n")
				data = []byte(rest)
			}
			h, evs, err := traces.ParseText(strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			r := ivCheck(h, evs)
			switch {
			case strings.Contains(f, "_sim_"):
				if r.Verdict != checker.Holds || r.Reread == 0 || r.Replays == 0 {
					t.Fatalf("verdict %s, %d takes read otherwise in %d replays; want holds, after a search", r.Verdict, r.Reread, r.Replays)
				}
			case strings.Contains(f, "_in_order"):
				if r.Verdict != checker.Holds {
					t.Fatalf("verdict %s; want holds\n%s", r.Verdict, r.Summary())
				}
			default:
				if r.Verdict != checker.Violated || r.Replays == 0 {
					t.Fatalf("verdict %s after %d replays; want violated, after a search", r.Verdict, r.Replays)
				}
			}
		})
	}
}
