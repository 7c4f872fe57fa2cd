package lin

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// FuzzLinearizability feeds arbitrary events, 16 bytes each, to
// Check: it returns a verdict or an error, never panics.
//
//	go test ./checker/lin -run '^$' -fuzz FuzzLinearizability -fuzztime 30s
func FuzzLinearizability(f *testing.F) {
	f.Add([]byte{}, uint8(2), "worksteal")
	seed := make([]byte, 0, 64)
	for _, e := range []traces.Event{
		{Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal},
		{Seq: 2, Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal},
		{Seq: 3, Kind: traces.KindPollEnd, Task: 1, Worker: 0, Result: traces.ResultReady},
	} {
		seed = append(seed, linFuzzBytes(e)...)
	}
	f.Add(seed, uint8(2), "fifo")
	f.Add(seed, uint8(1), "timeslice")
	f.Fuzz(func(t *testing.T, data []byte, workers uint8, policy string) {
		var events []traces.Event
		for len(data) >= 16 && len(events) < 64 {
			b := data[:16]
			data = data[16:]
			events = append(events, traces.Event{
				Seq:     uint64(b[0]),
				Call:    uint64(b[1]),
				Return:  uint64(b[2]),
				Task:    int64(int8(b[3])),
				Worker:  int32(int8(b[4])),
				Victim:  int32(int8(b[5])),
				Queue:   traces.Queue(int8(b[6])),
				Kind:    traces.Kind(b[7] % 12),
				Source:  traces.Source(b[8] % 6),
				Result:  traces.Result(b[9] % 5),
				Outcome: traces.Outcome(b[10] % 6),
			})
			_ = binary.LittleEndian.Uint32(b[12:])
		}
		h := traces.Header{Workers: int(workers % 20), Policy: policy, Config: map[string]int{"lifo-slot": int(workers % 2), "steal-half": int(workers / 2 % 2)}}
		res, err := Check(h, events, Options{Budget: 200 * time.Millisecond, Complete: workers%3 == 0})
		if err == nil && res.Verdict == checker.Holds && len(res.Checks) == 0 && len(events) > 0 && res.Ops > 0 {
			t.Fatal("holds without a check")
		}
	})
}

func linFuzzBytes(e traces.Event) []byte {
	b := make([]byte, 16)
	b[0], b[1], b[2] = byte(e.Seq), byte(e.Call), byte(e.Return)
	b[3], b[4], b[5], b[6] = byte(e.Task), byte(e.Worker), byte(e.Victim), byte(e.Queue)
	b[7], b[8], b[9], b[10] = byte(e.Kind), byte(e.Source), byte(e.Result), byte(e.Outcome)
	return b
}
