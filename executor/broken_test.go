package executor

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/traces"
)

// bug names one deliberate defect of brokenExec.
type bug int

const (
	bugDropWakeDuringPoll bug = iota + 1 // a wake while RUNNING is taken for a coalesced one: lost wakeup
	bugDoubleEnqueue                     // a wake of a QUEUED task queues it again
	bugPollAfterReady                    // a wake of a DONE task schedules it again
)

// brokenExec is a small one-worker executor with one deliberate bug, that
// records its events honestly (as it sees them). The table's event check
// must catch each bug.
type brokenExec struct {
	bug    bug
	mu     sync.Mutex
	cond   sync.Cond
	q      []*btask
	rec    Recorder
	clock  uint64 // under mu
	ids    int64
	live   int
	closed bool
	exited chan struct{}
}

type btask struct {
	ex    *brokenExec
	id    int64
	f     Future
	state uint64 // stQueued ...; under ex.mu
	ended bool   // under ex.mu
	done  chan struct{}
	v     any
}

func newBroken(b bug) *brokenExec {
	e := &brokenExec{bug: b, exited: make(chan struct{})}
	e.cond.L = &e.mu
	go e.work()
	return e
}

func (e *brokenExec) SetRecorder(r Recorder) { e.rec = r }

func (e *brokenExec) Describe() traces.Header { return header("broken", 1, "fifo", nil) }

func (e *brokenExec) record(x traces.Event) { // under mu
	e.clock += 2
	x.Call, x.Seq, x.Return = e.clock-1, e.clock, e.clock
	x.Victim = -1
	if e.rec != nil {
		e.rec.Record(x)
	}
}

func (e *brokenExec) Spawn(f Future) (Handle, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ids++
	t := &btask{ex: e, id: e.ids, f: f, state: stQueued, done: make(chan struct{})}
	e.live++
	e.q = append(e.q, t)
	e.record(traces.Event{Kind: traces.KindSpawn, Task: t.id, Worker: -1, Queue: traces.QueueGlobal})
	e.cond.Broadcast()
	return t, nil
}

func (t *btask) Wake() {
	e := t.ex
	e.mu.Lock()
	defer e.mu.Unlock()
	x := traces.Event{Kind: traces.KindWake, Task: t.id, Worker: -1}
	switch {
	case t.state == stWaiting,
		t.state == stQueued && e.bug == bugDoubleEnqueue,
		t.state == stDone && e.bug == bugPollAfterReady:
		t.state = stQueued
		e.q = append(e.q, t)
		x.Outcome, x.Queue = traces.OutcomeScheduled, traces.QueueGlobal
		e.cond.Broadcast()
	case t.state == stRunning && e.bug != bugDropWakeDuringPoll:
		t.state = stNotified
		x.Outcome = traces.OutcomeNotified
	case t.state == stDone:
		x.Outcome = traces.OutcomeLate
	default:
		x.Outcome = traces.OutcomeCoalesced
	}
	e.record(x)
}

func (t *btask) Clone() RawWaker { return t }

func (t *btask) Poll(*Context) (any, bool) { panic("not used") }

func (t *btask) Join() (any, error) { <-t.done; return t.v, nil }

func (e *brokenExec) work() {
	e.mu.Lock()
	for {
		for len(e.q) == 0 && !e.closed {
			e.cond.Wait()
		}
		if len(e.q) == 0 {
			e.mu.Unlock()
			close(e.exited)
			return
		}
		t := e.q[0]
		e.q = e.q[1:]
		t.state = stRunning
		e.record(traces.Event{Kind: traces.KindTake, Task: t.id, Source: traces.SourceGlobal})
		e.record(traces.Event{Kind: traces.KindPollBegin, Task: t.id})
		e.mu.Unlock()
		v, ok := t.f.Poll(NewContext(NewWaker(t), 0))
		e.mu.Lock()
		switch {
		case ok:
			t.state = stDone
			e.record(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Result: traces.ResultReady})
			if !t.ended {
				t.ended = true
				t.v = v
				close(t.done)
				e.live--
			}
			e.cond.Broadcast()
		case t.state == stNotified:
			e.record(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Result: traces.ResultPending})
			t.state = stQueued
			e.q = append(e.q, t)
			e.record(traces.Event{Kind: traces.KindRequeue, Task: t.id, Queue: traces.QueueGlobal})
		default:
			t.state = stWaiting
			e.record(traces.Event{Kind: traces.KindPollEnd, Task: t.id, Result: traces.ResultPending})
		}
	}
}

func (e *brokenExec) Wait() error {
	e.mu.Lock()
	for e.live > 0 {
		e.cond.Wait()
	}
	e.mu.Unlock()
	return nil
}

func (e *brokenExec) Close() error {
	e.Wait()
	e.mu.Lock()
	e.closed = true
	e.cond.Broadcast()
	e.mu.Unlock()
	<-e.exited
	return nil
}

// TestCheckCatchesBrokenExecutors: the event check of the workload table
// finds each deliberate bug, on a workload that exercises it, and names
// what went wrong.
func TestCheckCatchesBrokenExecutors(t *testing.T) {
	cases := []struct {
		bug      bug
		workload string
		want     string
	}{
		{bugDropWakeDuringPoll, "wake_during_poll", "lost wakeup"},
		{bugDoubleEnqueue, "wake_from_outside", "while already queued"},
		{bugPollAfterReady, "late_wakes", "taken after it ended"},
	}
	for _, c := range cases {
		var w workload
		for _, x := range workloads {
			if x.name == c.workload {
				w = x
			}
		}
		err := runRecorded(func() Executor { return newBroken(c.bug) }, w, plainEnv(), 2*time.Second)
		if err == nil {
			t.Errorf("bug %d: not caught", c.bug)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("bug %d: caught, but the report does not say %q:\n%v", c.bug, c.want, err)
			continue
		}
		t.Logf("bug %d caught: %.200s", c.bug, err)
	}
	// The same executor without a bug passes.
	for _, w := range workloads {
		switch w.name {
		case "panics", "chain_of_awaits", "spawn_tree":
			continue // brokenExec neither recovers panics nor lets tasks await handles
		}
		if err := runRecorded(func() Executor { return newBroken(0) }, w, plainEnv(), 20*time.Second); err != nil {
			t.Errorf("bug-free brokenExec, %s: %v", w.name, err)
		}
	}
}

// TestCheckEventsCatchesBadTraces: hand-made traces, each with one
// defect, against the queue replay of checkEvents.
func TestCheckEventsCatchesBadTraces(t *testing.T) {
	ws := header("worksteal", 2, "worksteal", map[string]int{"local-cap": 2, "owner-lifo": 1, "global-interval": 0})
	spawnG := func(seq uint64, task int64) traces.Event {
		return traces.Event{Seq: seq, Kind: traces.KindSpawn, Task: task, Worker: -1, Victim: -1, Queue: traces.QueueGlobal}
	}
	spawnL := func(seq uint64, task int64, w int) traces.Event {
		return traces.Event{Seq: seq, Kind: traces.KindSpawn, Task: task, Worker: int32(w), Victim: -1, Queue: traces.LocalQueue(w)}
	}
	take := func(seq uint64, task int64, w int, src traces.Source, victim int) traces.Event {
		return traces.Event{Seq: seq, Kind: traces.KindTake, Task: task, Worker: int32(w), Victim: int32(victim), Source: src}
	}
	cases := []struct {
		name string
		h    traces.Header
		evs  []traces.Event
		want string
	}{
		{"global not FIFO", header("fifo", 1, "fifo", nil),
			[]traces.Event{spawnG(1, 1), spawnG(2, 2), take(3, 2, 0, traces.SourceGlobal, -1)}, "not the head"},
		{"owner takes the steal end", ws,
			[]traces.Event{spawnL(1, 1, 0), spawnL(2, 2, 0), take(3, 1, 0, traces.SourceLocal, -1)}, "owner end (tail) holds 2"},
		{"thief takes the owner end", ws,
			[]traces.Event{spawnL(1, 1, 0), spawnL(2, 2, 0), take(3, 2, 1, traces.SourceSteal, 0)}, "steal end holds [1 2]"},
		{"steal while the global queue is not empty", ws,
			[]traces.Event{spawnL(1, 1, 0), spawnG(2, 2), take(3, 1, 1, traces.SourceSteal, 0)}, "premise global = ∅ fails"},
		{"global take with local work", ws,
			[]traces.Event{spawnL(1, 1, 0), spawnG(2, 2), take(3, 2, 0, traces.SourceGlobal, -1)}, "its local queue holds [1]"},
		{"overflow beyond capacity", ws,
			[]traces.Event{spawnL(1, 1, 0), spawnL(2, 2, 0), spawnL(3, 3, 0)}, "full local queue"},
		{"overflow with room", ws,
			[]traces.Event{{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: 0, Victim: -1, Queue: traces.QueueGlobal}}, "local queue had room"},
		{"push on another worker's queue", ws,
			[]traces.Event{{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: 1, Victim: -1, Queue: traces.LocalQueue(0)}}, "on worker 0's local queue"},
		{"taken twice", header("fifo", 2, "fifo", nil),
			[]traces.Event{spawnG(1, 1), take(2, 1, 0, traces.SourceGlobal, -1), take(3, 1, 1, traces.SourceGlobal, -1)}, "while worker 0 polls it"},
		{"seq repeated", header("fifo", 1, "fifo", nil),
			[]traces.Event{spawnG(1, 1), spawnG(1, 2)}, "zero or repeated"},
	}
	for _, c := range cases {
		err := checkEvents(c.h, c.evs, -1, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
