package rt_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control"
)

// churn starts goroutines in waves, one of each wave starting a child,
// all of them returning: workers are reused within a run as across runs.
// It returns the order in which they reported. It starts no goroutine
// that is not controlled: a run of it needs no settle before a choice.
func churn() string {
	var order []int
	done := make(chan int)
	for wave := range 3 {
		for i := range 3 {
			id := wave*10 + i
			rt.Go(func() {
				if i == 0 {
					inner := make(chan int)
					rt.Go(func() { rt.Send(inner, id+100) })
					id = rt.Recv(inner)
				}
				rt.Gosched()
				rt.Send(done, id)
			})
		}
		for range 3 {
			order = append(order, rt.Recv(done))
		}
	}
	return fmt.Sprint(order)
}

// churnGoroutines is the number of goroutines of churn, goroutine 0
// included: a run of it makes that many choices but one (the last exit
// ends the run) beyond one per step.
const churnGoroutines = 1 + 3*3 + 3

// Reused goroutines change no schedule: a run in a bubble whose free
// workers earlier runs left (churn's, contended's, whose goroutine 0
// starts an uncontrolled goroutine) makes the choices, steps and
// checksum of the same run in a bubble of its own, settling always or
// with the fast path, and the fast path skips exactly the settles it
// skips there (all of churn's); a run that needs no more goroutines at once than the
// same run before it makes none; the bubble ends cleanly.
func TestReuseKeepsSchedules(t *testing.T) {
	defer func() { *rt.AlwaysSettle = false }()
	// The settles skipped are compared on one P only: with GOMAXPROCS
	// set, the process keeps its Ps (rtproc.HoldOneProc), and a goroutine of the
	// process that ends on another P meanwhile (the watchdog of the run
	// before) makes a run settle once.
	oneP := os.Getenv("GOMAXPROCS") == ""
	type config struct {
		seed     uint64
		body     func() string
		churn    bool // body is churn
		strategy func() control.Strategy
		// In a bubble of its own: the result, the schedule, the settles
		// skipped.
		want    string
		ref     control.Schedule
		skipped int64
	}
	var configs []config
	for seed := range uint64(10) {
		for bi, body := range []func() string{churn, contended} {
			configs = append(configs,
				config{seed: seed, body: body, churn: bi == 0, strategy: func() control.Strategy { return control.Random(seed) }},
				config{seed: seed, body: body, churn: bi == 0, strategy: func() control.Strategy { return control.NewPCT(3, 200, seed) }})
		}
	}
	// The runs in bubbles of their own first: a bubble's goroutines that
	// end after its run (contended's uncontrolled one) would make the
	// other bubble's runs settle (the bubble's next run waits for them).
	for i := range configs {
		c := &configs[i]
		st := c.strategy()
		if b, ok := st.(interface{ Begin() }); ok {
			b.Begin() // as a bubble's run does
		}
		skipped := rt.SkippedSettles.Load()
		var err error
		c.ref, err = rt.Run(t, rt.Config{Strategy: st}, func(*testing.T) { c.want = c.body() })
		c.skipped = rt.SkippedSettles.Load() - skipped
		if err != nil {
			t.Fatalf("config %d, own bubble: %v", i, err)
		}
		if picks := int64(c.ref.Steps + churnGoroutines - 1); oneP && c.churn && c.skipped != picks {
			t.Fatalf("config %d, own bubble: %d settles skipped of %d choices; want all", i, c.skipped, picks)
		}
	}
	b, err := rt.NewBubble(t)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range configs {
		for k, always := range []bool{true, false, false} {
			*rt.AlwaysSettle = always
			made, skipped := rt.WorkersMade.Load(), rt.SkippedSettles.Load()
			var got string
			sc, err := b.Run(rt.Config{Strategy: c.strategy()}, func(*testing.T) { got = c.body() })
			if err != nil || got != c.want || sc.Steps != c.ref.Steps || sc.Checksum != c.ref.Checksum || !slices.Equal(sc.Choices, c.ref.Choices) {
				t.Fatalf("config %d, run %d in the bubble (settling always: %v): %s in %d steps (checksum %x), %v; in a bubble of its own %s in %d steps (%x)",
					i, k, always, got, sc.Steps, sc.Checksum, err, c.want, c.ref.Steps, c.ref.Checksum)
			}
			if n := rt.SkippedSettles.Load() - skipped; oneP && !always && n != c.skipped {
				t.Fatalf("config %d, run %d in the bubble: %d settles skipped; %d in a bubble of its own", i, k, n, c.skipped)
			}
			if n := rt.WorkersMade.Load() - made; k == 2 && n != 0 {
				t.Errorf("config %d: the run again made %d goroutines; want all reused", i, n)
			}
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// The reports of a run on reused goroutines are those of the same run
// on fresh ones: a deadlock names the same operations at the same lines
// of the program, a panic's stack the frame of the panic.
func TestReusedReports(t *testing.T) {
	b, err := rt.NewBubble(t)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var panicAt string
	deadlock := func(*testing.T) {
		a, c := make(chan int), make(chan int)
		rt.Go(func() { rt.Recv(a) })
		rt.Go(func() { rt.Send(c, 1) })
		rt.Recv(make(chan int))
	}
	panics := func(*testing.T) {
		rt.Go(func() {
			_, file, line, _ := runtime.Caller(0)
			panicAt = fmt.Sprintf("%s:%d", file, line+2) // the panic
			panic("boom")
		})
		rt.Recv(make(chan int))
	}
	warm := func(*testing.T) {
		done := make(chan int)
		for range 4 {
			rt.Go(func() { rt.Send(done, 1) })
		}
		for range 4 {
			rt.Recv(done)
		}
	}
	for _, body := range []func(*testing.T){deadlock, panics} {
		_, fresh := rt.Run(t, rt.Config{}, body)
		if _, err := b.Run(rt.Config{}, warm); err != nil {
			t.Fatal(err)
		}
		made := rt.WorkersMade.Load()
		_, reused := b.Run(rt.Config{}, body)
		if rt.WorkersMade.Load() != made {
			t.Fatal("the run made goroutines: not a run on reused ones")
		}
		var pf, pr *rt.PanicError
		switch {
		case fresh == nil || reused == nil:
			t.Fatalf("no error: %v, %v", fresh, reused)
		case errors.As(fresh, &pf) && errors.As(reused, &pr):
			if pf.G != pr.G || !strings.Contains(string(pf.Stack), panicAt) || !strings.Contains(string(pr.Stack), panicAt) {
				t.Errorf("the panic of goroutine %d on fresh goroutines, of %d on reused ones, not both at %s:\n%s\n%s", pf.G, pr.G, panicAt, pf.Stack, pr.Stack)
			}
		case fresh.Error() != reused.Error() || !strings.Contains(reused.Error(), "gpool_ext_test.go:"):
			t.Errorf("on fresh goroutines:\n%v\non reused ones:\n%v", fresh, reused)
		}
	}
}

// A program that counts its goroutines with rt.NumGoroutine counts one
// more per goroutine it started and as many as before once they ended,
// on reused workers as on fresh ones; runtime.NumGoroutine counts the
// free workers too.
func TestNumGoroutine(t *testing.T) {
	b, err := rt.NewBubble(t)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var before, during, after, rawAfter int
	body := func(*testing.T) {
		before = rt.NumGoroutine()
		rawBefore := runtime.NumGoroutine()
		started, release, done := make(chan int), make(chan int), make(chan int)
		for range 3 {
			rt.Go(func() {
				rt.Send(started, 1)
				rt.Recv(release)
				rt.Send(done, 1)
			})
		}
		for range 3 {
			rt.Recv(started)
		}
		during = rt.NumGoroutine()
		rt.Close(release)
		for range 3 {
			rt.Recv(done)
		}
		for range 3 {
			rt.Gosched() // they end
		}
		after = rt.NumGoroutine()
		rawAfter = runtime.NumGoroutine() - rawBefore
	}
	for run := range 3 {
		if _, err := b.Run(rt.Config{}, body); err != nil {
			t.Fatal(err)
		}
		if during != before+3 || after != before {
			t.Errorf("run %d: %d goroutines before, %d with three more, %d after they ended; want %d, %d", run, before, during, after, before+3, before)
		}
		if run == 0 && rawAfter != 3 {
			t.Errorf("runtime.NumGoroutine: %d more after the first run's goroutines ended; want their 3 free workers", rawAfter)
		}
	}
}
