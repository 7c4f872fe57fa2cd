package traces

import (
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// packable draws an Event that Pack must accept.
func packable(t *rapid.T) Event {
	seq := rapid.Uint64Range(2, 1<<62).Draw(t, "seq")
	e := Event{
		Seq:     seq,
		Call:    seq - uint64(rapid.IntRange(0, 2).Draw(t, "call")),
		Task:    rapid.Int64().Draw(t, "task"),
		Worker:  rapid.Int32Range(-1, MaxPackedWorker).Draw(t, "worker"),
		Victim:  rapid.Int32Range(-1, MaxPackedWorker).Draw(t, "victim"),
		Queue:   Queue(rapid.Int32Range(-1, MaxPackedWorker+1).Draw(t, "queue")),
		Kind:    Kind(rapid.Uint8Range(0, 15).Draw(t, "kind")),
		Source:  Source(rapid.Uint8Range(0, 15).Draw(t, "source")),
		Result:  Result(rapid.Uint8Range(0, 15).Draw(t, "result")),
		Outcome: Outcome(rapid.Uint8Range(0, 15).Draw(t, "outcome")),
	}
	if e.Call == seq {
		e.Call = 0
	}
	switch rapid.IntRange(0, 2).Draw(t, "return") {
	case 1:
		e.Return = seq
	case 2:
		e.Return = seq + 1
	}
	// The v1.1 fields a Packed holds, on the kinds that carry them.
	if e.Victim == -1 && rapid.Bool().Draw(t, "extra") {
		switch extraKind(e.Kind) {
		case 'p':
			e.Priority = rapid.Int32Range(0, MaxPackedExtra).Draw(t, "priority")
			e.Prioritized = true
		case 'f':
			e.Future = rapid.Int64Range(1, MaxPackedExtra).Draw(t, "future")
		}
	}
	return e
}

func TestPackRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := packable(t)
		p, ok := Pack(e)
		if !ok {
			t.Fatalf("Pack refused %+v", e)
		}
		if got := p.Event(); got != e {
			t.Fatalf("Pack(%+v).Event() = %+v", e, got)
		}
		if p.Worker() != e.Worker {
			t.Fatalf("Worker() = %d, want %d", p.Worker(), e.Worker)
		}
	})
}

func TestPackRefuses(t *testing.T) {
	ok := Event{Seq: 10, Kind: KindSpawn, Worker: -1, Victim: -1, Queue: QueueGlobal, Return: 10}
	if _, fits := Pack(ok); !fits {
		t.Fatal("a plain spawn does not pack")
	}
	for name, change := range map[string]func(e *Event){
		"rule":             func(e *Event) { e.Rule = 1 },
		"kind":             func(e *Event) { e.Kind = 16 },
		"call far":         func(e *Event) { e.Call = e.Seq - 3 },
		"call late":        func(e *Event) { e.Call = e.Seq },
		"detail":           func(e *Event) { e.Detail = "panic: x" },
		"worker high":      func(e *Event) { e.Worker = MaxPackedWorker + 1 },
		"worker low":       func(e *Event) { e.Worker = -2 },
		"victim high":      func(e *Event) { e.Victim = MaxPackedWorker + 1 },
		"queue high":       func(e *Event) { e.Queue = MaxPackedWorker + 2 },
		"queue low":        func(e *Event) { e.Queue = -2 },
		"source":           func(e *Event) { e.Source = 16 },
		"result":           func(e *Event) { e.Result = 16 },
		"outcome":          func(e *Event) { e.Outcome = 16 },
		"return far":       func(e *Event) { e.Return = e.Seq + 2 },
		"return early":     func(e *Event) { e.Return = e.Seq - 1 },
		"time":             func(e *Event) { e.Time = 5 },
		"priority neg":     func(e *Event) { e.Priority, e.Prioritized = -1, true },
		"priority big":     func(e *Event) { e.Priority, e.Prioritized = MaxPackedExtra+1, true },
		"priority bare":    func(e *Event) { e.Priority = 3 },
		"priority victim":  func(e *Event) { e.Priority, e.Prioritized, e.Victim = 3, true, 0 },
		"future on spawn":  func(e *Event) { e.Future = 1 },
		"priority on poll": func(e *Event) { e.Kind, e.Priority, e.Prioritized = KindPollBegin, 2, true },
		"future big":       func(e *Event) { e.Kind, e.Future = KindPollEnd, MaxPackedExtra+1 },
		"future neg":       func(e *Event) { e.Kind, e.Future = KindPollEnd, -1 },
		"both":             func(e *Event) { e.Future, e.Priority, e.Prioritized = 1, 1, true },
	} {
		e := ok
		change(&e)
		if p, fits := Pack(e); fits {
			t.Errorf("%s: Pack accepted %+v as %+v", name, e, p.Event())
		}
	}
}

// TestPackedBuilders: the builders an executor uses give what Pack gives
// for the same event.
func TestPackedBuilders(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seq := rapid.Uint64Range(3, 1<<62).Draw(t, "seq")
		task := rapid.Int64Range(0, 1<<40).Draw(t, "task")
		w := rapid.Int32Range(-1, MaxPackedWorker).Draw(t, "worker")
		base := Event{Seq: seq, Task: task, Worker: w, Victim: -1}
		check := func(name string, p Packed, e Event) {
			want, ok := Pack(e)
			if !ok || p != want {
				t.Fatalf("%s: builders gave %+v, Pack %+v (ok %v)", name, p.Event(), e, ok)
			}
		}
		q := Queue(rapid.Int32Range(-1, MaxPackedWorker+1).Draw(t, "queue"))
		spawn := base
		spawn.Kind, spawn.Queue, spawn.Call, spawn.Return = KindSpawn, q, seq-1, seq
		check("spawn", PackedEvent(KindSpawn, seq, task, w).WithQueueOp(q, seq-1), spawn)

		wake := spawn
		wake.Kind, wake.Outcome = KindWake, OutcomeScheduled
		check("wake", PackedEvent(KindWake, seq, task, w).WithOutcome(OutcomeScheduled).WithQueueOp(q, seq-1), wake)

		v := rapid.Int32Range(-1, MaxPackedWorker).Draw(t, "victim")
		take := base
		take.Kind, take.Source, take.Victim, take.Call, take.Return = KindTake, SourceSteal, v, seq-1, seq+1
		check("take", PackedEvent(KindTake, seq, task, w).WithTake(SourceSteal, v), take)

		requeue := spawn
		requeue.Kind, requeue.Call = KindRequeue, seq-2
		check("requeue", PackedEvent(KindRequeue, seq, task, w).WithQueueOp(q, seq-2), requeue)

		end := base
		end.Kind, end.Result = KindPollEnd, ResultPending
		check("poll-end", PackedEvent(KindPollEnd, seq, task, w).WithResult(ResultPending), end)

		pr := rapid.Int32Range(0, MaxPackedExtra).Draw(t, "priority")
		pspawn := spawn
		pspawn.Priority, pspawn.Prioritized = pr, true
		check("spawn with priority", PackedEvent(KindSpawn, seq, task, w).WithQueueOp(q, seq-1).WithPriority(pr), pspawn)

		f := rapid.Int64Range(1, MaxPackedExtra).Draw(t, "future")
		fend := end
		fend.Future = f
		check("poll-end with future", PackedEvent(KindPollEnd, seq, task, w).WithResult(ResultPending).WithFuture(f), fend)
	})
}

func TestPackedSize(t *testing.T) {
	if s := unsafe.Sizeof(Packed{}); s != 24 {
		t.Errorf("Packed is %d bytes, want 24", s)
	}
}

func TestLogMixesPackedAndEvents(t *testing.T) {
	var l Log
	var batch []Packed
	for i := range 3*4*logChunk + 17 { // several chunks
		p, _ := Pack(Event{Seq: uint64(2*i + 2), Kind: KindPark, Worker: int32(i % 3), Victim: -1})
		batch = append(batch, p)
		if len(batch) == 300 {
			l.RecordPacked(batch)
			batch = batch[:0]
		}
	}
	l.RecordPacked(batch)
	l.RecordPacked(nil)
	l.Record(Event{Seq: 1, Kind: KindPanic, Worker: 0, Victim: -1, Detail: "panic: x"})
	want := 3*4*logChunk + 18
	check := func() {
		t.Helper()
		ev := l.Events()
		if len(ev) != want || l.Len() != want {
			t.Fatalf("%d events (Len %d), want %d", len(ev), l.Len(), want)
		}
		if ev[0].Seq != 1 || ev[0].Detail != "panic: x" {
			t.Fatalf("event 0: %+v", ev[0])
		}
		for i, e := range ev[1:] {
			if e.Seq != uint64(2*i+2) || e.Worker != int32(i%3) {
				t.Fatalf("event %d: %+v", i+1, e)
			}
		}
	}
	check()
	// Reset keeps the chunks, and refills them.
	l.Reset()
	if l.Len() != 0 || len(l.Events()) != 0 {
		t.Fatal("Reset left events")
	}
	allocs := testing.AllocsPerRun(5, func() {
		l.Reset()
		l.RecordPacked(batch)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per batch after Reset, want 0", allocs)
	}
}
