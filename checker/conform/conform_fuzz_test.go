package conform

import (
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// fuzzTrace decodes bytes into a header and events: small task ids, workers
// in and out of range, every kind, source, result, outcome and queue, Seq
// mostly increasing. Any bytes decode; most sequences are violations, some
// conform.
func fuzzTrace(data []byte) (traces.Header, []traces.Event) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	policies := []string{"fifo", "worksteal", "priority", "timeslice", "retry"}
	b := next()
	h := hdr(1+int(b%4), policies[int(b>>2)%len(policies)], nil)
	f := next()
	if h.Policy == "worksteal" {
		h.Config = map[string]int{"local-cap": 1 + int(f%3), "owner-lifo": int(f>>2) & 1, "steal-half": int(f>>3) & 1, "lifo-slot": int(f>>4) & 1, "global-interval": int(f>>5) % 3}
	}
	if h.Policy == "timeslice" {
		h.Config = map[string]int{"slice": int(f % 3)}
	}
	if h.Policy == "retry" {
		h.Config = map[string]int{"retries": int(f % 3)}
	}
	var events []traces.Event
	var seq uint64
	for len(data) > 0 {
		k, x, y := next(), next(), next()
		seq += uint64(x % 3) // 0: equal Seq; rarely backwards below
		if x == 255 && seq > 2 {
			seq -= 2
		}
		e := traces.Event{
			Seq:     seq,
			Kind:    traces.Kind(1 + k%11),
			Task:    int64(y%6) + 1,
			Worker:  int32(int(x>>2)%6) - 1,
			Victim:  int32(int(y>>3)%5) - 1,
			Source:  traces.Source((k >> 4) % 5),
			Result:  traces.Result((k >> 4) % 4),
			Outcome: traces.Outcome((k >> 4) % 5),
			Queue:   traces.Queue(int(y>>5)%5 - 1),
		}
		if k&0x80 != 0 && seq > 1 {
			e.Call = seq - uint64(1+y%2)
		}
		if e.Kind == traces.KindStep {
			e.Rule = model.Rule(1 + y%uint8(model.NumRules-1))
		}
		if e.Kind == traces.KindPark || e.Kind == traces.KindUnpark {
			e.Task = 0
		}
		events = append(events, e)
	}
	return h, events
}

// checkSticky gives c the events and fails t unless a violation, once
// found, is the error of every later event and of the report, whose
// verdict agrees with it. Lanes, asked after every event, must not panic.
// It returns the report.
func checkSticky(t *testing.T, c *Conformance, events []traces.Event) *Report {
	t.Helper()
	var first error
	for i, e := range events {
		err := c.Step(e)
		if first != nil && err != first {
			t.Fatalf("event %d: violation not sticky: %v then %v", i, first, err)
		}
		if err != nil {
			first = err
		}
		_ = c.Lanes()
	}
	r := c.Finish()
	if (r.Err != nil) != (r.Verdict == checker.Violated) || (first != nil && r.Err == nil) {
		t.Fatalf("verdict %s with err %v (first %v)", r.Verdict, r.Err, first)
	}
	return r
}

// FuzzConformance: random event sequences never panic, a violation is
// sticky, and Finish always gives a report whose verdict matches it.
func FuzzConformance(f *testing.F) {
	f.Add([]byte{0x05, 0x00, 0x01, 0x04, 0x00})
	f.Add([]byte{0x04, 0x13, 0x01, 0x01, 0x00, 0x12, 0x05, 0x00, 0x13, 0x05, 0x00, 0x24, 0x05, 0x00})
	f.Add([]byte{0x0d, 0x02, 0x01, 0x02, 0x01, 0x02, 0x05, 0x01, 0x13, 0x05, 0x01, 0x03, 0x05, 0x01, 0x14, 0x05, 0x01, 0x35, 0x05, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, events := fuzzTrace(data)
		c, err := New(h)
		if err != nil {
			t.Fatalf("header %+v refused: %v", h, err)
		}
		r := checkSticky(t, c, events)
		if r.Err != nil && r.Err.Msg == "" {
			t.Fatal("violation without a message")
		}
		_ = r.Summary()
	})
}

// FuzzConformanceMutated starts from a random correct trace (which must
// conform) and changes a few fields of a few events: deep states that
// random sequences never reach, and then any event there. Never a panic; a
// violation is sticky.
func FuzzConformanceMutated(f *testing.F) {
	f.Add(uint64(1), uint8(0), []byte{10, 1, 3})
	f.Add(uint64(7), uint8(2), []byte{40, 4, 1, 90, 2, 200})
	f.Add(uint64(3), uint8(3), []byte{25, 0, 7, 26, 5, 1, 27, 6, 2})
	headers := []traces.Header{
		hdr(2, "fifo", nil),
		hdr(3, "worksteal", map[string]int{"local-cap": 2, "global-interval": 3}),
		hdr(2, "worksteal", map[string]int{"local-cap": 3, "owner-lifo": 0, "steal-half": 1}),
		hdr(2, "timeslice", map[string]int{"slice": 1}),
		hdr(3, "worksteal", map[string]int{"local-cap": 1, "lifo-slot": 1, "global-interval": 2}),
	}
	f.Fuzz(func(t *testing.T, seed uint64, which uint8, muts []byte) {
		h := headers[int(which)%len(headers)]
		g := newConfGen(t, h, seed)
		events := g.run(t, 200)
		for len(muts) >= 3 {
			i, field, v := int(muts[0])%len(events), muts[1]%8, muts[2]
			muts = muts[3:]
			e := &events[i]
			switch field {
			case 0:
				e.Kind = traces.Kind(1 + v%10)
			case 1:
				e.Task = int64(v%8) + 1
			case 2:
				e.Worker = int32(v%4) - 1
			case 3:
				e.Source, e.Victim = traces.Source(v%5), int32(v>>4)%3
			case 4:
				e.Result = traces.Result(v % 4)
			case 5:
				e.Outcome = traces.Outcome(v % 5)
			case 6:
				e.Queue = traces.Queue(int(v%4) - 1)
			case 7:
				events = append(events[:i:i], events[i+1:]...)
				if len(events) == 0 {
					return
				}
			}
		}
		c, err := New(h)
		if err != nil {
			t.Fatal(err)
		}
		checkSticky(t, c, events)
	})
}
