package gotrace

import (
	"bytes"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// goEvents builds a GoTrace from a text-form event list, one millisecond
// per event, so that the figures can be checked exactly.
func goEvents(t *testing.T, workers int, text string, initial map[int64]model.TaskState) *traces.GoTrace {
	t.Helper()
	h := "execspec-trace v1 executor=go workers=" + string(rune('0'+workers)) + " policy=go\n"
	hdr, events, err := traces.ParseText(strings.NewReader(h + text))
	if err != nil {
		t.Fatal(err)
	}
	gt := &traces.GoTrace{Header: hdr, Events: events, Initial: initial, Start: map[int64]string{}}
	for i := range events {
		gt.Times = append(gt.Times, int64(i)*int64(time.Millisecond))
	}
	return gt
}

func TestCheckGoTraceFigures(t *testing.T) {
	gt := goEvents(t, 2, `
#1 out spawn t1
#2 out spawn t2
#3 w0 take t1
#4 w1 take t2
#5 w0 poll-end t1 pending detail="chan receive\nmain.worker\n\tmain.go:12"
#6 w1 wake t1 scheduled
#7 w0 take t3
#8 w0 poll-end t3 ready
#9 w1 poll-end t2 ready
#10 w1 take t1
#11 w1 poll-end t1 ready
`, map[int64]model.TaskState{3: model.Queued})
	rep := Check(gt, Options{})
	if rep.Verdict != checker.Holds || len(rep.Violations) != 0 {
		t.Fatalf("verdict %v, violations %v", rep.Verdict, rep.Violations)
	}
	if rep.Goroutines != 3 {
		t.Errorf("%d goroutines, want 3", rep.Goroutines)
	}
	// t1 was woken at event 5 (5 ms) and ran at event 9 (9 ms), after one
	// other run (t3); t3 waited 6 ms from the start of the trace.
	if rep.MaxDelay != 6*time.Millisecond || rep.MaxOtherRuns != 2 {
		t.Errorf("max delay %v, max other runs %d; want 6ms and 2", rep.MaxDelay, rep.MaxOtherRuns)
	}
	var d1 Delay
	for _, d := range rep.Delays {
		if d.Goroutine == 1 {
			d1 = d
		}
	}
	if d1.Waits != 2 || d1.MaxDelay != 4*time.Millisecond || d1.MaxOtherRuns != 1 || !strings.Contains(d1.Where, "main.worker") {
		t.Errorf("goroutine 1: %+v; want 2 waits, longest 4ms after 1 other run, blocked in main.worker", d1)
	}
	if rep.WorstByTime[0].Goroutine != 3 || rep.WorstByRuns[0].Goroutine != 3 {
		t.Errorf("worst cases %v / %v, want goroutine 3 first", rep.WorstByTime, rep.WorstByRuns)
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	for _, want := range []string{"lifecycle holds", "goroutine 1: 4ms", "main.worker", "cannot show", "WORKER-STEAL"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCheckGoTraceCatchesBrokenSchedules: each trace breaks one lifecycle
// rule, and the check names it.
func TestCheckGoTraceCatchesBrokenSchedules(t *testing.T) {
	cases := []struct{ name, text, msg string }{
		{"two Ps at once", "#1 out spawn t1\n#2 w0 take t1\n#3 w1 take t1\n", "goroutine 1 runs on P 1 while it is running on P 0"},
		{"P runs two", "#1 out spawn t1\n#2 out spawn t2\n#3 w0 take t1\n#4 w0 take t2\n", "P 0 runs goroutine 2 while goroutine 1 is still running"},
		{"run after exit", "#1 out spawn t1\n#2 w0 take t1\n#3 w0 poll-end t1 ready\n#4 w1 take t1\n", "runs after it exited"},
		{"run without wake", "#1 out spawn t1\n#2 w0 take t1\n#3 w0 poll-end t1 pending\n#4 w1 take t1\n", "runs while blocked, without a wake"},
		{"never created", "#1 w0 take t9\n", "never created"},
		{"wake of runnable", "#1 out spawn t1\n#2 out wake t1 scheduled\n", "woken while QUEUED"},
		{"wake after exit", "#1 out spawn t1\n#2 w0 take t1\n#3 w0 poll-end t1 ready\n#4 out wake t1 scheduled\n", "woken after it exited"},
		{"stop elsewhere", "#1 out spawn t1\n#2 w0 take t1\n#3 w1 poll-end t1 pending\n", "stops running on P 1 but it ran on P 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := Check(goEvents(t, 2, c.text, nil), Options{})
			if rep.Verdict != checker.Violated || len(rep.Violations) == 0 || !strings.Contains(rep.Violations[0].Msg, c.msg) {
				t.Fatalf("verdict %v, violations %v; want one saying %q", rep.Verdict, rep.Violations, c.msg)
			}
		})
	}
}

func TestCheckGoTraceStuckRunnable(t *testing.T) {
	text := "#1 out spawn t1\n#2 out spawn t2\n#3 w0 take t2\n#4 w0 poll-end t2 pending\n#5 out wake t2 scheduled\n"
	for range 20 {
		text += "#9 w1 park\n"
	}
	gt := goEvents(t, 2, text, nil)
	// t1 waits 24 ms to the end of the trace; t2 20 ms.
	rep := Check(gt, Options{StuckAfter: 22 * time.Millisecond})
	if rep.Verdict != checker.Violated || len(rep.LeftRunnable) != 2 {
		t.Fatalf("verdict %v, left runnable %v", rep.Verdict, rep.LeftRunnable)
	}
	if g := rep.LeftRunnable[0]; g.Goroutine != 1 || !g.Stuck || g.Waited != 24*time.Millisecond {
		t.Errorf("first left runnable %+v, want goroutine 1 stuck for 24ms", g)
	}
	if g := rep.LeftRunnable[1]; g.Goroutine != 2 || g.Stuck {
		t.Errorf("second left runnable %+v, want goroutine 2, not stuck", g)
	}
	if len(rep.Violations) != 1 || !strings.Contains(rep.Violations[0].Msg, "goroutine 1 was runnable for 24ms") {
		t.Errorf("violations %v", rep.Violations)
	}
	if rep := Check(gt, Options{StuckAfter: time.Second}); rep.Verdict != checker.Holds {
		t.Errorf("with a 1s threshold: %v %v", rep.Verdict, rep.Violations)
	}
}

// TestCheckGoTraceOfRealRun checks the trace of a real workload: the Go
// scheduler conforms, and the figures name the workload's goroutines.
func TestCheckGoTraceOfRealRun(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Skipf("runtime/trace in use: %v", err)
	}
	var wg sync.WaitGroup
	ch := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range ch {
				_ = v * v
				runtime.Gosched()
			}
		}()
	}
	for i := range 400 {
		ch <- i
	}
	close(ch)
	wg.Wait()
	trace.Stop()

	gt, err := traces.ReadGoTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(gt, Options{StuckAfter: time.Minute})
	if rep.Verdict != checker.Holds {
		t.Fatalf("the Go scheduler's own trace does not conform: %v", rep.Violations)
	}
	if len(rep.Delays) < 4 || rep.MaxDelay <= 0 || rep.MaxOtherRuns < 1 {
		t.Errorf("figures: %d goroutines measured, max delay %v, max other runs %d", len(rep.Delays), rep.MaxDelay, rep.MaxOtherRuns)
	}
	var out bytes.Buffer
	rep.WriteText(&out)
	if !strings.Contains(out.String(), "TestCheckGoTraceOfRealRun") {
		t.Errorf("no worst case is named with a stack of the workload:\n%s", out.String())
	}
	t.Logf("%s", out.String())
}

// FuzzCheckGoTrace: no event sequence makes Check panic, and its
// verdict agrees with its findings.
func FuzzCheckGoTrace(f *testing.F) {
	f.Add("#1 out spawn t1\n#2 w0 take t1\n#3 w1 take t1\n")
	f.Add("#1 out spawn t1\n#2 w0 take t1\n#3 w0 poll-end t1 pending\n#4 out wake t1 scheduled\n#5 w1 take t1\n#6 w1 poll-end t1 ready\n")
	f.Fuzz(func(t *testing.T, text string) {
		h, events, err := traces.ParseText(strings.NewReader("execspec-trace v1 executor=go workers=3 policy=go\n" + text))
		if err != nil || h.Workers != 3 {
			return
		}
		gt := &traces.GoTrace{Header: h, Events: events}
		for i := range events {
			gt.Times = append(gt.Times, int64(i))
		}
		rep := Check(gt, Options{StuckAfter: 3})
		if (rep.Verdict == checker.Violated) != (len(rep.Violations) > 0) {
			t.Fatalf("verdict %v with %d violations", rep.Verdict, len(rep.Violations))
		}
	})
}
