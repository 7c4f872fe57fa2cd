package lin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

var linHeader = traces.Header{Format: traces.Format, Version: traces.Version, Executor: "sim", Workers: 3, Policy: "worksteal"}

func TestLinearizabilityLegalRuns(t *testing.T) {
	for seed := range uint64(40) {
		events := newLinSim(seed, 3, 8, 2, bugNone).run(10000)
		res, err := Check(linHeader, events, Options{Complete: true, Budget: 5 * time.Second})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if res.Verdict != checker.Holds {
			t.Fatalf("seed %d: %s, want holds\n%s", seed, res.Verdict, res.Summary())
		}
		if seed == 0 {
			t.Logf("%s", res.Summary())
		}
	}
}

func TestLinearizabilityInjectedBugs(t *testing.T) {
	cases := []struct {
		name string
		bug  linBug
		spec string // a check that must be violated
	}{
		{"task taken twice", bugTakeTwice, "task"},
		{"steal from the owner end", bugStealOwner, "local"},
		{"lost element", bugLoseElement, "task"},
		{"wake that enqueues twice", bugWakeTwice, "task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			found := 0
			for seed := range uint64(60) {
				events, injected := buggyRun(seed, c.bug)
				if !injected {
					continue
				}
				found++
				res, err := Check(linHeader, events, Options{Complete: true, Budget: 5 * time.Second})
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if res.Verdict != checker.Violated {
					t.Fatalf("seed %d: %s, want violated\n%s", seed, res.Verdict, res.Summary())
				}
				hit := false
				for _, ch := range res.Checks {
					if strings.HasPrefix(ch.Spec, c.spec) && ch.Verdict == checker.Violated {
						hit = true
					}
				}
				if !hit {
					t.Fatalf("seed %d: %s not violated\n%s", seed, c.spec, res.Summary())
				}
			}
			if found < 5 {
				t.Fatalf("bug injected in only %d of 60 runs", found)
			}
		})
	}
}

func TestLinearizabilityHTML(t *testing.T) {
	dir := t.TempDir()
	for seed := range uint64(60) {
		events, injected := buggyRun(seed, bugStealOwner)
		if !injected {
			continue
		}
		path := filepath.Join(dir, "trace.lin.html")
		res, err := Check(linHeader, events, Options{Complete: true, HTML: path})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != checker.Violated || res.HTML != path {
			t.Fatalf("verdict %s, html %q\n%s", res.Verdict, res.HTML, res.Summary())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"take-head", "steal"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("visualization lacks %q", want)
			}
		}
		return
	}
	t.Fatal("no run had the bug")
}

// A run cut short: operations called before the cut and not returned are
// kept with no return; the rest is dropped. Still linearizable.
func TestLinearizabilityCutRun(t *testing.T) {
	for seed := range uint64(20) {
		events := newLinSim(seed, 3, 8, 2, bugNone).run(10000)
		cut := events[len(events)/2].Seq
		var kept []traces.Event
		open := 0
		for _, e := range events {
			if e.Call > cut {
				continue
			}
			if e.Return > cut {
				e.Return = 0
				open++
			}
			kept = append(kept, e)
		}
		res, err := Check(linHeader, kept, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != checker.Holds {
			t.Fatalf("seed %d (%d never returned): %s\n%s", seed, open, res.Verdict, res.Summary())
		}
		// Claiming the cut run complete must fail: tasks are not DONE.
		res, err = Check(linHeader, kept, Options{Complete: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != checker.Violated {
			t.Fatalf("seed %d: a cut run checked as complete: %s", seed, res.Verdict)
		}
	}
}

// A never-returned take is kept: the same element taken again later by
// another worker is a violation, not hidden by dropping the open take.
func TestLinearizabilityNeverReturnedKept(t *testing.T) {
	ev := []traces.Event{
		{Seq: 2, Call: 1, Return: 3, Kind: traces.KindSpawn, Task: 1, Worker: -1, Queue: traces.QueueGlobal},
		{Seq: 5, Call: 4, Return: 0, Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceGlobal},
		{Seq: 8, Call: 7, Return: 9, Kind: traces.KindTake, Task: 1, Worker: 1, Source: traces.SourceGlobal},
	}
	res, err := Check(linHeader, ev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != checker.Violated {
		t.Fatalf("%s\n%s", res.Verdict, res.Summary())
	}
	// Without the second take, the open one may take effect: holds.
	res, _ = Check(linHeader, ev[:2], Options{})
	if res.Verdict != checker.Holds {
		t.Fatalf("%s\n%s", res.Verdict, res.Summary())
	}
}

func TestLinearizabilityBadInput(t *testing.T) {
	cases := map[string]traces.Event{
		"no clock":        {Kind: traces.KindSpawn, Task: 1, Worker: -1},
		"task 0":          {Seq: 1, Kind: traces.KindSpawn, Worker: -1},
		"unknown kind":    {Seq: 1, Kind: 200, Task: 1},
		"return before":   {Seq: 5, Call: 5, Return: 3, Kind: traces.KindSpawn, Task: 1, Worker: -1},
		"bad worker":      {Seq: 1, Kind: traces.KindSpawn, Task: 1, Worker: -7},
		"steal no victim": {Seq: 1, Kind: traces.KindTake, Task: 1, Worker: 0, Source: traces.SourceSteal, Victim: -1},
	}
	for name, e := range cases {
		_, err := Check(linHeader, []traces.Event{e}, Options{})
		if err == nil || !strings.Contains(err.Error(), "event 1") {
			t.Errorf("%s: error %v, want one naming event 1", name, err)
		}
	}
}

// A visualization that cannot be written does not lose the verdict.
func TestLinearizabilityHTMLUnwritable(t *testing.T) {
	for seed := range uint64(60) {
		events, injected := buggyRun(seed, bugStealOwner)
		if !injected {
			continue
		}
		path := filepath.Join(t.TempDir(), "no", "such", "dir", "x.html")
		res, err := Check(linHeader, events, Options{Complete: true, HTML: path})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != checker.Violated || res.HTML != "" || res.HTMLError == "" {
			t.Fatalf("verdict %s, html %q, error %q", res.Verdict, res.HTML, res.HTMLError)
		}
		if !strings.Contains(res.Summary(), "visualization not written") {
			t.Fatalf("summary does not say so:\n%s", res.Summary())
		}
		return
	}
	t.Fatal("no run had the bug")
}

// TestLinearizabilitySpuriousPolls: a conforming busy-polling trace (format
// v1.1, spurious-polls 1) is not flagged: the task model has no spurious
// polls, so the tasks are left unchecked with the reason, and the queues
// are checked.
func TestLinearizabilitySpuriousPolls(t *testing.T) {
	h, events, err := traces.ParseText(strings.NewReader(`execspec-trace v1.1 executor=busy workers=1 policy=fifo spurious-polls=1
#1 out spawn t1 -> global
#2 w0 take t1 global
#3 w0 poll-begin t1
#4 w0 poll-end t1 pending
#5 w0 requeue t1 -> global
#6 w0 take t1 global
#7 w0 poll-begin t1
#8 w0 poll-end t1 ready
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(h, events, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != checker.Unknown {
		t.Fatalf("verdict %v, want unknown\n%s", res.Verdict, res.Summary())
	}
	for _, c := range res.Checks {
		switch c.Spec {
		case "task":
			if c.Verdict != checker.Unknown || !strings.Contains(c.Detail, "spurious polls") {
				t.Errorf("task check %v %q, want unknown naming spurious polls", c.Verdict, c.Detail)
			}
		case "global":
			if c.Verdict != checker.Holds {
				t.Errorf("global queue %v, want holds", c.Verdict)
			}
		case "executor":
			t.Errorf("the whole executor was checked: %v %q", c.Verdict, c.Detail)
		}
	}
}
