package traces

import (
	"bytes"
	"runtime/trace"
	"strings"
	"sync"
	"testing"

	"github.com/execspec/execspec/model"
)

// goWorkload runs goroutines that block on channels and wake each other:
// spawns, waits, wakes and exits for the trace to show.
func goWorkload() {
	var wg sync.WaitGroup
	ping, pong := make(chan int), make(chan int)
	wg.Add(2)
	go func() { // pinger
		defer wg.Done()
		for i := range 50 {
			ping <- i
			<-pong
		}
		close(ping)
	}()
	go func() { // ponger
		defer wg.Done()
		for i := range ping {
			pong <- i
		}
	}()
	wg.Wait()
}

// recordGoTrace returns a runtime/trace execution trace of f.
func recordGoTrace(t *testing.T, f func()) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("runtime/trace is already in use: %v", err)
	}
	f()
	trace.Stop()
	return buf.Bytes()
}

func TestReadGoTrace(t *testing.T) {
	gt, err := ReadGoTrace(bytes.NewReader(recordGoTrace(t, goWorkload)))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckHeader(gt.Header); err != nil {
		t.Fatal(err)
	}
	if len(gt.Events) != len(gt.Times) || len(gt.Events) == 0 {
		t.Fatalf("%d events, %d times", len(gt.Events), len(gt.Times))
	}
	// Find the two workload goroutines by their start function and follow
	// each through the lifecycle the mapping promises.
	var ours []int64
	for g, s := range gt.Start {
		if strings.Contains(s, "goWorkload.func") {
			ours = append(ours, g)
		}
	}
	if len(ours) != 2 {
		t.Fatalf("found %d workload goroutines by start stack, want 2 (starts: %v)", len(ours), gt.Start)
	}
	for i, e := range gt.Events {
		if err := Validate(gt.Header, e); err != nil {
			t.Fatalf("event %d %s: %v", i, FormatEvent(e), err)
		}
		if i > 0 && gt.Times[i] < gt.Times[i-1] {
			t.Fatalf("time goes back at event %d", i)
		}
	}
	for _, g := range ours {
		if _, ok := gt.Initial[g]; ok {
			t.Errorf("goroutine %d created during the trace is listed as existing before it", g)
		}
		state := model.Idle
		var kinds []string
		blocks := 0
		for _, e := range gt.Events {
			if e.Task != g {
				continue
			}
			kinds = append(kinds, e.Kind.String())
			switch {
			case e.Kind == KindSpawn && state == model.Idle:
				state = model.Queued
			case e.Kind == KindTake && state == model.Queued:
				state = model.Running
			case e.Kind == KindPollEnd && state == model.Running && e.Result == ResultPending:
				state = model.Waiting
				blocks++
				if !strings.Contains(e.Detail, "goWorkload") {
					t.Errorf("blocking poll-end of goroutine %d without its stack: %q", g, e.Detail)
				}
			case e.Kind == KindPollEnd && state == model.Running && e.Result == ResultReady:
				state = model.Done
			case e.Kind == KindWake && (state == model.Waiting || state == model.Running):
				state = model.Queued
			default:
				t.Fatalf("goroutine %d: %s in state %v; its events: %v", g, FormatEvent(e), state, kinds)
			}
		}
		if state != model.Done || blocks < 10 {
			t.Errorf("goroutine %d ends %v after %d blocks, want DONE after ≥ 10 channel blocks: %v", g, state, blocks, kinds)
		}
	}
	// What the JSON form of a Go trace says reads back.
	var buf bytes.Buffer
	if err := WriteAll(&buf, gt.Header, gt.Events); err != nil {
		t.Fatal(err)
	}
	if _, again, err := ReadAll(&buf, "go.jsonl"); err != nil || len(again) != len(gt.Events) {
		t.Fatalf("read back %d events, %v", len(again), err)
	}
}

func TestReadGoTraceBadInput(t *testing.T) {
	good := recordGoTrace(t, func() {})
	for name, in := range map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("not a trace at all\n"),
		"truncated": good[:len(good)/2],
		"a jsonl":   []byte(sampleJSON),
	} {
		if _, err := ReadGoTrace(bytes.NewReader(in)); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "Go trace") {
			t.Errorf("%s: error %q does not say it is about a Go trace", name, err)
		}
	}
}

// FuzzReadGoTrace: a corrupt Go trace is an error, never a panic, and what
// is read maps onto events that Validate accepts.
func FuzzReadGoTrace(f *testing.F) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err == nil {
		goWorkload()
		trace.Stop()
		f.Add(buf.Bytes())
	}
	f.Add([]byte("go 1.26 trace\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		gt, err := ReadGoTrace(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i, e := range gt.Events {
			if err := Validate(gt.Header, e); err != nil {
				t.Fatalf("event %d %s: %v", i, FormatEvent(e), err)
			}
		}
	})
}
