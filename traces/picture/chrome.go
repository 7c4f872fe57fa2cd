package picture

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/execspec/execspec/traces"
)

// WriteChromeTrace writes the trace in the Chrome trace-event format (JSON),
// which Perfetto (ui.perfetto.dev) and chrome://tracing open, so that traces
// too long for WriteHTML can be browsed. It is NewChromeWriter, Write for
// each event, then Close: see ChromeWriter for the format and the memory.
func WriteChromeTrace(w io.Writer, h traces.Header, events []traces.Event) error {
	cw, err := NewChromeWriter(w, h)
	if err != nil {
		return err
	}
	for _, e := range events {
		if err := cw.Write(e); err != nil {
			return err
		}
	}
	return cw.Close()
}

// ChromeWriter streams a trace in the Chrome trace-event format, one event
// at a time, so that a trace of any length is converted as it is read.
// Time is logical: one Seq is one microsecond. Each worker is a thread
// (tid = worker + 1; tid 0 is "outside"); each poll is a complete ("X")
// event from its take to its poll-end; spawns, wakes, parks and panics are
// instant events; wakes (waker → the task's next take) and steals (victim →
// thief) are flow events.
//
// Memory: a 64 KiB buffer and one entry per task that is being polled or has
// a pending wake, never one per event; the header is checked with
// CheckHeader first, so the worker table is at most MaxWorkers lines.
// A ChromeWriter is not safe for concurrent use.
type ChromeWriter struct {
	bw      *bufio.Writer
	b       []byte
	running map[int64]chromeStart
	wakes   map[int64]uint64
	flow    uint64
	err     error
}

type chromeStart struct {
	seq    uint64
	source traces.Source
	victim int32
}

// NewChromeWriter checks h and writes the beginning of the page to w.
func NewChromeWriter(w io.Writer, h traces.Header) (*ChromeWriter, error) {
	if h.Format == "" {
		h.Format = traces.Format
	}
	if h.Version == 0 {
		h.Version = traces.Version
	}
	if err := traces.CheckHeader(h); err != nil {
		return nil, fmt.Errorf("traces: chrome trace: %w", err)
	}
	cw := &ChromeWriter{bw: bufio.NewWriterSize(w, 64<<10), running: map[int64]chromeStart{}, wakes: map[int64]uint64{}}
	bw := cw.bw
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":{"format":"execspec-trace","executor":`)
	b := traces.AppendJSONString(nil, h.Executor)
	bw.Write(b)
	bw.WriteString(`,"policy":`)
	bw.Write(traces.AppendJSONString(b[:0], h.Policy))
	bw.WriteString(`,"time":"logical: 1 seq = 1 us"},"traceEvents":[`)
	b = b[:0]
	b = append(b, "\n"+`{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":`...)
	b = traces.AppendJSONString(b, "executor "+h.Executor)
	b = append(b, "}},\n"+`{"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"outside"}}`...)
	for i := 0; i < h.Workers; i++ {
		b = append(b, ",\n"+`{"name":"thread_name","ph":"M","pid":1,"tid":`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `,"args":{"name":"worker `...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `"}}`...)
		if len(b) >= 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return nil, err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return nil, err
	}
	cw.b = b[:0]
	return cw, nil
}

// Write writes one event. After a write error, Write returns it again.
func (cw *ChromeWriter) Write(e traces.Event) error {
	if cw.err != nil {
		return cw.err
	}
	b := cw.b[:0]
	tid := int64(e.Worker) + 1
	switch e.Kind {
	case traces.KindTake, traces.KindPollBegin:
		if _, ok := cw.running[e.Task]; !ok || e.Kind == traces.KindTake {
			cw.running[e.Task] = chromeStart{e.Seq, e.Source, e.Victim}
		}
		if e.Kind != traces.KindTake {
			break
		}
		if id, ok := cw.wakes[e.Task]; ok {
			b = appendFlow(b, "f", "wake", id, e.Seq, tid)
			delete(cw.wakes, e.Task)
		}
		if e.Source == traces.SourceSteal {
			cw.flow++
			b = appendFlow(b, "s", "steal", cw.flow, e.Seq, int64(e.Victim)+1)
			b = appendFlow(b, "f", "steal", cw.flow, e.Seq, tid)
		}
	case traces.KindPollEnd:
		s, ok := cw.running[e.Task]
		if !ok {
			s = chromeStart{seq: e.Seq}
		}
		delete(cw.running, e.Task)
		b = append(b, ",\n"+`{"name":"t`...)
		b = strconv.AppendInt(b, e.Task, 10)
		b = append(b, `","cat":"poll","ph":"X","pid":1,"tid":`...)
		b = strconv.AppendInt(b, tid, 10)
		b = append(b, `,"ts":`...)
		b = strconv.AppendUint(b, s.seq, 10)
		b = append(b, `,"dur":`...)
		b = strconv.AppendUint(b, max(e.Seq-min(e.Seq, s.seq), 1), 10)
		b = append(b, `,"args":{"task":`...)
		b = strconv.AppendInt(b, e.Task, 10)
		b = append(b, `,"result":"`...)
		b = append(b, e.Result.String()...)
		b = append(b, `","source":"`...)
		b = append(b, s.source.String()...)
		b = append(b, `"}}`...)
	case traces.KindWake:
		b = appendInstant(b, e, tid)
		if e.Outcome == traces.OutcomeScheduled || e.Outcome == traces.OutcomeNone {
			cw.flow++
			cw.wakes[e.Task] = cw.flow
			b = appendFlow(b, "s", "wake", cw.flow, e.Seq, tid)
		}
	default:
		b = appendInstant(b, e, tid)
	}
	cw.b = b
	if _, err := cw.bw.Write(b); err != nil {
		cw.err = err
	}
	return cw.err
}

// Close ends the page and flushes it; it does not close the io.Writer.
func (cw *ChromeWriter) Close() error {
	if cw.err != nil {
		return cw.err
	}
	cw.bw.WriteString("\n]}\n")
	cw.err = cw.bw.Flush()
	return cw.err
}

func appendInstant(b []byte, e traces.Event, tid int64) []byte {
	b = append(b, ",\n"+`{"name":`...)
	b = traces.AppendJSONString(b, string(traces.AppendText(nil, e)[len(strconv.AppendUint(nil, e.Seq, 10))+2:]))
	b = append(b, `,"cat":"`...)
	b = append(b, e.Kind.String()...)
	b = append(b, `","ph":"i","s":"t","pid":1,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	return append(b, '}')
}

func appendFlow(b []byte, ph, name string, id, ts uint64, tid int64) []byte {
	b = append(b, ",\n"+`{"name":"`...)
	b = append(b, name...)
	b = append(b, `","cat":"`...)
	b = append(b, name...)
	b = append(b, `","ph":"`...)
	b = append(b, ph...)
	if ph == "f" {
		b = append(b, `","bp":"e`...)
	}
	b = append(b, `","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"pid":1,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendUint(b, ts, 10)
	return append(b, '}')
}
