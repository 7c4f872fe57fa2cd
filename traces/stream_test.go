package traces

import (
	"io"
	"runtime"
	"strconv"
	"testing"
)

// genTrace is an io.Reader that produces a long trace on the fly, so that a
// test can read 1e7 events without holding them anywhere.
type genTrace struct {
	n, i int
	buf  []byte
	hdr  bool
	tw   []byte
}

func (g *genTrace) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && (g.i < g.n || !g.hdr) {
		if !g.hdr {
			g.buf = append(g.buf, `{"format":"execspec-trace","version":1,"executor":"gen","workers":4,"policy":"worksteal"}`+"\n"...)
			g.hdr = true
			continue
		}
		e := streamEvent(g.i)
		g.buf = appendEvent(g.buf, &e)
		g.buf = append(g.buf, '\n')
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

func streamEvent(i int) Event {
	e := Event{Seq: uint64(i + 1), Task: int64(i/4 + 1), Worker: int32(i % 4), Victim: -1}
	switch i % 4 {
	case 0:
		e.Kind, e.Queue, e.Worker = KindSpawn, QueueGlobal, -1
	case 1:
		e.Kind, e.Source = KindTake, SourceGlobal
	case 2:
		e.Kind = KindPollBegin
	case 3:
		e.Kind, e.Result = KindPollEnd, ResultReady
		e.Detail = "t" + strconv.Itoa(i)
	}
	return e
}

// TestStreamBoundedMemory reads a long trace and checks that the live heap
// does not grow with it.
func TestStreamBoundedMemory(t *testing.T) {
	n := 10_000_000
	if testing.Short() || raceEnabled {
		n = 300_000
	}
	r, err := NewReader(&genTrace{n: n}, "gen")
	if err != nil {
		t.Fatal(err)
	}
	var (
		ms       runtime.MemStats
		maxHeap  uint64
		count    int
		e        Event
		baseline uint64
	)
	for {
		err := r.NextInto(&e)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e != canonical(streamEvent(count)) {
			t.Fatalf("event %d = %+v, want %+v", count, e, streamEvent(count))
		}
		count++
		if count%(n/10) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if baseline == 0 {
				baseline = ms.HeapAlloc
			}
			maxHeap = max(maxHeap, ms.HeapAlloc)
		}
	}
	if count != n {
		t.Fatalf("read %d events, want %d", count, n)
	}
	t.Logf("%d events; live heap %d KiB at 10%%, at most %d KiB", n, baseline>>10, maxHeap>>10)
	if maxHeap > baseline+4<<20 {
		t.Errorf("live heap grew from %d to %d bytes while streaming: not bounded", baseline, maxHeap)
	}
}
