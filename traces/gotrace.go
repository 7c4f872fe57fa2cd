package traces

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/exp/trace"

	"github.com/execspec/execspec/model"
)

// GoTrace is a Go runtime execution trace (written by runtime/trace)
// mapped onto events: goroutines are tasks (task id = goroutine id), Ps are
// workers. The mapping:
//
//	NotExist → Runnable            spawn (SPAWN)
//	Runnable → Running             take on the P; the source is unknown
//	Running → Waiting | Syscall    poll-end pending (TASK-SUSPEND); Detail: why, and the stack
//	Waiting | Syscall → Runnable   wake, scheduled (WAKE)
//	Waiting | Syscall → Running    wake, then take on the P
//	Running → Runnable             poll-end pending, then wake (a preemption or yield)
//	Running → NotExist             poll-end ready (TASK-COMPLETE)
//
// A Go trace records neither run queues nor steals: every take has source
// none, and spawns and wakes have no queue. So such a trace cannot show
// POLL-LOCAL, GLOBAL-STEAL or WORKER-STEAL as distinct rules, where a woken
// goroutine was queued, nor NOTIFIED (a goroutine is never woken while it
// runs). GoTraceCannotShow says so in words.
type GoTrace struct {
	Header Header  // Executor "go runtime", Policy "go", Workers = the largest P + 1
	Events []Event // Seq is the event's index + 1
	// Times[i] is the trace time of Events[i], in nanoseconds since the
	// first event of the trace.
	Times []int64
	// Initial holds the goroutines that existed before the trace began (or
	// were created blocked), with the state they were first seen in: Queued
	// or Waiting. They have no spawn event. A goroutine that was running
	// when the trace began is Queued here and taken by its first event.
	Initial map[int64]model.TaskState
	// Start is each goroutine's starting function, when the trace says.
	Start map[int64]string
	// NoProc counts goroutine transitions to or from Running that had no P
	// and were left out (the runtime does not produce them).
	NoProc int
}

// GoTraceCannotShow lists what a Go runtime trace cannot show about the
// rules, for reports.
var GoTraceCannotShow = []string{
	"POLL-LOCAL, GLOBAL-STEAL and WORKER-STEAL: the trace does not say which run queue a goroutine was taken from, nor record steals",
	"where a spawned or woken goroutine was queued (the P's runnext, its local queue, or the global queue)",
	"NOTIFIED: a goroutine is never woken while it runs, so the wake-during-poll case does not arise",
	"POLL-PENDING: a goroutine does not register a waker; blocking is one transition",
}

// stackFrames is how many frames of a stack ReadGoTrace keeps in Detail.
const stackFrames = 8

// ReadGoTrace reads a Go runtime execution trace from r and maps it onto
// events. It returns an error, never panics, on a trace it cannot parse.
func ReadGoTrace(r io.Reader) (gt *GoTrace, err error) {
	defer func() {
		if p := recover(); p != nil {
			gt, err = nil, fmt.Errorf("reading Go trace: the parser failed on this input: %v", p)
		}
	}()
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading Go trace: %w", err)
	}
	m := goMapper{
		gt:     &GoTrace{Header: Header{Format: Format, Version: Version, Executor: "go runtime", Policy: "go", Workers: 1}, Initial: map[int64]model.TaskState{}, Start: map[int64]string{}},
		stacks: map[trace.Stack]string{},
		first:  -1,
	}
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading Go trace: %w", err)
		}
		if m.first < 0 {
			m.first = int64(ev.Time())
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		m.transition(ev, st)
	}
	return m.gt, nil
}

type goMapper struct {
	gt     *GoTrace
	stacks map[trace.Stack]string
	first  int64
	now    int64
}

func (m *goMapper) emit(e Event) {
	e.Seq = uint64(len(m.gt.Events) + 1)
	e.Victim = -1
	if int(e.Worker) >= m.gt.Header.Workers {
		m.gt.Header.Workers = min(int(e.Worker)+1, MaxWorkers)
	}
	m.gt.Events = append(m.gt.Events, e)
	m.gt.Times = append(m.gt.Times, m.now)
}

// stack formats the top frames of s, once per distinct stack.
func (m *goMapper) stack(s trace.Stack) string {
	if s == trace.NoStack {
		return ""
	}
	if t, ok := m.stacks[s]; ok {
		return t
	}
	var b strings.Builder
	n := 0
	for f := range s.Frames() {
		if n == stackFrames {
			b.WriteString("\t…\n")
			break
		}
		b.WriteString(f.Func)
		b.WriteString("\n\t")
		b.WriteString(f.File)
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(f.Line, 10))
		b.WriteByte('\n')
		n++
	}
	t := strings.TrimSuffix(b.String(), "\n")
	m.stacks[s] = t
	return t
}

func (m *goMapper) transition(ev trace.Event, st trace.StateTransition) {
	from, to := st.Goroutine()
	if from == to {
		return // a status report at a generation boundary, not a change
	}
	m.now = int64(ev.Time()) - m.first
	g := int64(st.Resource.Goroutine())
	if g < 1 {
		return
	}
	p := int32(-1)
	if pid := ev.Proc(); pid >= 0 && pid < MaxWorkers {
		p = int32(pid)
	}
	take := func() {
		if p < 0 {
			m.gt.NoProc++
			return
		}
		m.emit(Event{Kind: KindTake, Task: g, Worker: p})
	}
	pollEnd := func(r Result, detail string) {
		if p < 0 {
			m.gt.NoProc++
			return
		}
		m.emit(Event{Kind: KindPollEnd, Task: g, Worker: p, Result: r, Detail: detail})
	}
	wake := func(detail string) {
		m.emit(Event{Kind: KindWake, Task: g, Worker: p, Outcome: OutcomeScheduled, Detail: detail})
	}
	blocked := func() string {
		s := m.stack(st.Stack)
		if st.Reason == "" {
			return s
		}
		if s == "" {
			return st.Reason
		}
		return st.Reason + "\n" + s
	}
	running := func(s trace.GoState) bool { return s == trace.GoRunning }
	asleep := func(s trace.GoState) bool { return s == trace.GoWaiting || s == trace.GoSyscall }

	switch {
	case from == trace.GoUndetermined || (from == trace.GoNotExist && asleep(to)):
		if s := m.stack(st.Stack); s != "" && from == trace.GoNotExist {
			m.gt.Start[g] = s
		}
		switch {
		case asleep(to):
			m.gt.Initial[g] = model.Waiting
		case to == trace.GoRunnable || running(to):
			m.gt.Initial[g] = model.Queued
			if running(to) {
				take()
			}
		}
	case from == trace.GoNotExist:
		start := m.stack(st.Stack)
		if start != "" {
			m.gt.Start[g] = start
		}
		m.emit(Event{Kind: KindSpawn, Task: g, Worker: p, Detail: start})
		if running(to) {
			take()
		}
	case from == trace.GoRunnable && running(to):
		take()
	case running(from) && asleep(to):
		pollEnd(ResultPending, blocked())
	case running(from) && to == trace.GoRunnable:
		pollEnd(ResultPending, blocked())
		wake(st.Reason)
	case running(from) && to == trace.GoNotExist:
		pollEnd(ResultReady, "")
	case asleep(from) && to == trace.GoRunnable:
		wake(st.Reason)
	case asleep(from) && running(to):
		wake(st.Reason)
		take()
	case from == trace.GoSyscall && to == trace.GoNotExist:
		// A goroutine of a thread that came from C ends in its syscall.
		wake("destroyed in a syscall")
		take()
		pollEnd(ResultReady, "destroyed in a syscall")
	}
}
