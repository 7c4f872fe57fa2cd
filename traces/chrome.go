package traces

import (
	"bufio"
	"io"
	"strconv"
)

// WriteChromeTrace writes the trace in the Chrome trace-event format (JSON),
// which Perfetto (ui.perfetto.dev) and chrome://tracing open, so that traces
// too long for WriteHTML can be browsed. Time is logical: one Seq is one
// microsecond. Each worker is a thread (tid = worker + 1; tid 0 is
// "outside"); each poll is a complete ("X") event from its take to its
// poll-end; spawns, wakes, parks and panics are instant events; wakes
// (waker → the task's next take) and steals (victim → thief) are flow
// events. Memory: one entry per task that is being polled or has a pending
// wake, not per event.
func WriteChromeTrace(w io.Writer, h Header, events []Event) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":{"format":"execspec-trace","executor":`)
	b := appendString(nil, h.Executor)
	bw.Write(b)
	bw.WriteString(`,"policy":`)
	bw.Write(appendString(b[:0], h.Policy))
	bw.WriteString(`,"time":"logical: 1 seq = 1 us"},"traceEvents":[`)
	b = b[:0]
	b = append(b, "\n"+`{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":`...)
	b = appendString(b, "executor "+h.Executor)
	b = append(b, "}},\n"+`{"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"outside"}}`...)
	for i := 0; i < h.Workers; i++ {
		b = append(b, ",\n"+`{"name":"thread_name","ph":"M","pid":1,"tid":`...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `,"args":{"name":"worker `...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `"}}`...)
	}
	bw.Write(b)

	type start struct {
		seq    uint64
		source Source
		victim int32
	}
	type wake struct {
		id uint64
	}
	running := map[int64]start{}
	wakes := map[int64]wake{}
	var flow uint64
	for _, e := range events {
		b = b[:0]
		tid := int64(e.Worker) + 1
		switch e.Kind {
		case KindTake, KindPollBegin:
			if _, ok := running[e.Task]; !ok || e.Kind == KindTake {
				running[e.Task] = start{e.Seq, e.Source, e.Victim}
			}
			if e.Kind != KindTake {
				break
			}
			if wk, ok := wakes[e.Task]; ok {
				b = appendFlow(b, "f", "wake", wk.id, e.Seq, tid)
				delete(wakes, e.Task)
			}
			if e.Source == SourceSteal {
				flow++
				b = appendFlow(b, "s", "steal", flow, e.Seq, int64(e.Victim)+1)
				b = appendFlow(b, "f", "steal", flow, e.Seq, tid)
			}
		case KindPollEnd:
			s, ok := running[e.Task]
			if !ok {
				s = start{seq: e.Seq}
			}
			delete(running, e.Task)
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
		case KindWake:
			if e.Outcome == OutcomeScheduled || e.Outcome == OutcomeNone {
				flow++
				wakes[e.Task] = wake{flow}
				b = appendInstant(b, e, tid)
				b = appendFlow(b, "s", "wake", flow, e.Seq, tid)
			} else {
				b = appendInstant(b, e, tid)
			}
		default:
			b = appendInstant(b, e, tid)
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

func appendInstant(b []byte, e Event, tid int64) []byte {
	b = append(b, ",\n"+`{"name":`...)
	b = appendString(b, string(AppendText(nil, e)[len(strconv.AppendUint(nil, e.Seq, 10))+2:]))
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
