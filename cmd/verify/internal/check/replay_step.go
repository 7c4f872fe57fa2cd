package check

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// replayFrame is one event of a replay and the state after it (for the
// violating event: the state before it, which it could not change).
type replayFrame struct {
	i     int // index in the trace, from 0
	e     traces.Event
	lanes string
	err   *conform.Error
}

// stepper shows a replay a screen at a time and moves through it with
// keys: → or space or l or n forward, ← or h or p back, Home or g the
// start, End or G the end (the violation), q or Ctrl-C or Ctrl-D quits.
type stepper struct {
	title   string
	init    string // the state before the first event
	frames  []replayFrame
	end     []string // the report at the end of a trace that conforms, or nil
	total   int      // events replayed
	dropped int      // events not kept (before --from, or beyond the bound)
}

// Rule premises and conclusions, as DESIGN.md states them, for the screen.
var rulePremise = map[model.Rule][2]string{
	model.SPAWN:         {"a task not yet spawned", "QUEUED, pushed on the global queue (or, spawned from a task on worker w, on w's local queue)"},
	model.POLL_LOCAL:    {"worker w idle, local(w) ≠ ∅", "pop from the owner end of local(w); RUNNING(w)"},
	model.GLOBAL_STEAL:  {"w idle, local(w) = ∅, global ≠ ∅", "pop the head of global; RUNNING(w)"},
	model.WORKER_STEAL:  {"w idle, local(w) = ∅, global = ∅, local(v) ≠ ∅ (v ≠ w)", "take from the steal end of local(v); RUNNING(w)"},
	model.POLL_PENDING:  {"RUNNING, the future is not finished", "the future registers its waker; a wake can arrive during the poll"},
	model.TASK_SUSPEND:  {"the poll returns Pending", "WAITING; or, if NOTIFIED during the poll, QUEUED again (the wake is not lost)"},
	model.TASK_COMPLETE: {"RUNNING, the future returns Ready", "DONE; the worker is idle; never polled again"},
	model.WAKE:          {"the task's waker is called", "WAITING → QUEUED; RUNNING → NOTIFIED; QUEUED, NOTIFIED, DONE → nothing"},
}

func ruleLine(e traces.Event) string {
	r := conform.EventRule(e)
	if e.Kind == traces.KindStep && e.Rule == model.WORKER_STEAL && e.Queue != traces.QueueNone {
		return "no rule: a look at a queue (the first half of a two-step steal)"
	}
	if p, ok := rulePremise[r]; ok {
		return fmt.Sprintf("rule %s — premise: %s; conclusion: %s", r, p[0], p[1])
	}
	switch e.Kind {
	case traces.KindPollBegin:
		return "no rule: the worker must be RUNNING the task it polls"
	case traces.KindRequeue:
		return "no rule: says where TASK-SUSPEND of a NOTIFIED task (or a retry) re-queued it"
	}
	return "no rule: a finding, not a step of the model"
}

// screen returns the lines shown at position p: -1 the initial state,
// 0..len(frames)-1 an event, len(frames) the end report.
func (s *stepper) screen(p int) []string {
	out := []string{s.title}
	last := len(s.frames) - 1
	switch {
	case p < 0:
		out = append(out, fmt.Sprintf("before event 1 (%d events)", s.total), "", "initial state:")
		out = append(out, indentLanes(s.init)...)
	case p <= last:
		f := s.frames[p]
		out = append(out, fmt.Sprintf("event %d of %d: %s", f.i+1, s.total, bounded(cli.ShortEvent(f.e))), bounded(ruleLine(f.e)), "")
		if f.err != nil {
			out = append(out, "VIOLATION of "+ruleName(f.err)+": "+bounded(f.err.Error()))
			if f.err.Premise != "" {
				out = append(out, "  premise: "+bounded(strings.TrimSuffix(f.err.Premise, " fails"))+" fails")
			}
			if f.err.Reason != "" {
				out = append(out, "  instead: "+bounded(f.err.Reason))
			}
			out = append(out, "", "state before the event, unchanged:")
		} else {
			out = append(out, "state after it:")
		}
		out = append(out, indentLanes(f.lanes)...)
	default:
		for _, l := range s.end {
			out = append(out, bounded(l))
		}
	}
	if s.dropped > 0 {
		out = append(out, "", fmt.Sprintf("(%d events before these are replayed but not kept: see --from)", s.dropped))
	}
	out = append(out, "", "→ space: next   ← : back   Home/End: first/last   q: quit")
	return out
}

func indentLanes(lanes string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(lanes, "\n"), "\n") {
		out = append(out, "  "+bounded(l))
	}
	return out
}

// key is a decoded keypress.
type key int

const (
	keyNone key = iota
	keyNext
	keyPrev
	keyFirst
	keyLast
	keyQuit
)

// readKey decodes one keypress: a letter, or an ANSI escape sequence for
// the arrows, Home and End. io.EOF quits.
func readKey(r *bufio.Reader) key {
	c, err := r.ReadByte()
	if err != nil {
		return keyQuit
	}
	switch c {
	case ' ', 'l', 'n', 'j', '\r', '\n':
		return keyNext
	case 'h', 'p', 'k', 'b', 0x7f:
		return keyPrev
	case 'g':
		return keyFirst
	case 'G':
		return keyLast
	case 'q', 'Q', 0x03, 0x04:
		return keyQuit
	case 0x1b:
		c1, err := r.ReadByte()
		if err != nil || (c1 != '[' && c1 != 'O') {
			return keyNone
		}
		c2, err := r.ReadByte()
		if err != nil {
			return keyNone
		}
		switch c2 {
		case 'C':
			return keyNext
		case 'D':
			return keyPrev
		case 'H':
			return keyFirst
		case 'F':
			return keyLast
		case '1', '7', '4', '8', '5', '6':
			c3, _ := r.ReadByte()
			if c3 != '~' {
				return keyNone
			}
			switch c2 {
			case '1', '7':
				return keyFirst
			case '4', '8':
				return keyLast
			case '5':
				return keyPrev
			case '6':
				return keyNext
			}
		}
	}
	return keyNone
}

// run shows the screen at start and moves with the keys read from in
// until q, the end of in, or ctx's end; it returns the positions shown, in
// order.
func (s *stepper) run(ctx context.Context, in io.Reader, out io.Writer, start int) []int {
	keys := make(chan key)
	go func() {
		// Reads until a quit key or the end of in; left blocked on a read
		// when ctx ends first (the command is about to exit).
		r := bufio.NewReader(in)
		for {
			k := readKey(r)
			select {
			case keys <- k:
			case <-ctx.Done():
				return
			}
			if k == keyQuit {
				return
			}
		}
	}()
	last := len(s.frames) - 1
	if s.end != nil {
		last++
	}
	p := min(last, max2(-1, start))
	var shown []int
	for {
		shown = append(shown, p)
		// Clear the screen and home the cursor; a raw terminal needs \r\n.
		io.WriteString(out, "\x1b[H\x1b[2J"+strings.Join(s.screen(p), "\r\n")+"\r\n")
		for moved := false; !moved; {
			var k key
			select {
			case k = <-keys:
			case <-ctx.Done():
				return shown
			}
			np := p
			switch k {
			case keyNext:
				np = min(last, p+1)
			case keyPrev:
				np = max2(-1, p-1)
			case keyFirst:
				np = -1
			case keyLast:
				np = last
			case keyQuit:
				return shown
			}
			moved = np != p
			p = np
		}
	}
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}
