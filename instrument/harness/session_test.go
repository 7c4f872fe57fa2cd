package harness

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/instrument/rt/rtstd"
	"github.com/execspec/execspec/properties/control"
)

// abba is a program with a lock-order deadlock that some schedules hit.
func abba() {
	var a, b rtstd.Mutex
	var wg rtstd.WaitGroup
	wg.Add(2)
	rt.Go(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock(); wg.Done() })
	rt.Go(func() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock(); wg.Done() })
	wg.Wait()
}

// A Session's runs return their failures as values: the test is not
// failed, the runs go on after a failure, and a failing schedule saved
// with its metadata replays with the same checksum.
func TestSessionFailuresAreValues(t *testing.T) {
	dir := t.TempDir()
	s, err := NewSession(t, Options{Runs: 60, Seed: 3, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	var first control.Schedule
	hangs, passes := 0, 0
	for range s.Runs() {
		sched, err := s.Run(abba)
		var h *rt.HangError
		switch {
		case errors.As(err, &h):
			if hangs == 0 {
				first = sched
			}
			hangs++
		case err == nil:
			passes++
		default:
			t.Fatal(err)
		}
	}
	if t.Failed() || hangs == 0 || passes == 0 || s.Made() != 60 {
		t.Fatalf("failed %v, %d hangs and %d passes in %d runs", t.Failed(), hangs, passes, s.Made())
	}
	path := s.Path("abba")
	meta := Meta{"case": "7", "workload": `{"ops":[1,2]}`}
	if err := SaveSchedule(path, first, meta); err != nil {
		t.Fatal(err)
	}
	got, gotMeta, err := LoadSchedule(path)
	if err != nil {
		t.Fatal(err)
	}
	if gotMeta["case"] != "7" || gotMeta["workload"] != meta["workload"] || got.Checksum != first.Checksum {
		t.Fatalf("loaded %v %+v, saved %+v", gotMeta, got, first)
	}
	// The file is still a schedule for control.Load (TestWith's replay).
	if _, err := control.Load(path); err != nil {
		t.Fatal(err)
	}
	r, err := NewSession(t, Options{Strategy: "replay", Schedule: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, m, ok := r.Replaying(); !ok || m["case"] != "7" || r.Runs() != 1 {
		t.Fatalf("replaying: %v %v %d", ok, m, r.Runs())
	}
	for i := range 10 {
		sched, err := r.Run(abba)
		if !errors.Is(err, rt.ErrDeadlock) || sched.Checksum != first.Checksum {
			t.Fatalf("replay %d: %v, checksum %x want %x", i, err, sched.Checksum, first.Checksum)
		}
	}
	// A replay of another program diverges.
	if _, err := r.Run(func() { rt.Go(func() {}); rt.Gosched() }); !errors.Is(err, control.ErrDiverged) {
		t.Fatalf("replaying another program: %v", err)
	}
}

// A body run by TestWith that calls Own is called again outside any
// bubble and makes the runs itself; the Outcome is the Session's.
func TestWithOwnedBody(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.jsonl")
	calls, runs := 0, 0
	t.Run("owned", func(t *testing.T) {
		TestWith(t, Options{Runs: 25, Seed: 1, Report: report}, func(t *testing.T) {
			calls++
			s, err := Own(t)
			if err != nil {
				t.Fatal(err)
			}
			for range s.Runs() {
				if _, err := s.Run(abba); err == nil {
					runs++
				} else if errors.Is(err, rt.ErrDeadlock) {
					s.Failed(s.Made(), err, "", control.Schedule{})
				}
			}
		})
	})
	if calls != 2 || runs == 0 {
		t.Fatalf("body called %d times (want 2: the run that asked, then the owner), %d runs passed", calls, runs)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var o Outcome
	if err := json.Unmarshal(data, &o); err != nil || strings.Count(string(data), "\n") != 1 {
		t.Fatalf("report %q: %v", data, err)
	}
	if o.Runs != 25 || o.FailedRun == 0 || o.Kind != "deadlock" {
		t.Fatalf("outcome %+v", o)
	}
}

// A goroutine left blocked for good in the session's bubble (by code
// run through Do) does not end the process at Close: Close says so.
func TestSessionCloseWithLeftovers(t *testing.T) {
	s, err := NewSession(t, Options{Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Do(func() { go func() { select {} }() }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(func() {}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("Close: %v", err)
	}
	if t.Failed() {
		t.Fatal("the leftover failed the test")
	}
}

// ReadReport reads the report's lines and names the file and line of one
// that is not an outcome.
func TestReadReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.jsonl")
	good := `{"test":"TestA","strategy":"pct","runs":3,"steps":9,"seconds":0.1}`
	if err := os.WriteFile(path, []byte(good+"\n\n"+good+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err := ReadReport(path)
	if err != nil || len(outs) != 2 || outs[1].Test != "TestA" || outs[1].Runs != 3 {
		t.Fatalf("got %+v, %v", outs, err)
	}
	if err := os.WriteFile(path, []byte(good+"\n{\"runs\":"), 0o644); err != nil {
		t.Fatal(err)
	}
	outs, err = ReadReport(path)
	if len(outs) != 1 || err == nil || !strings.Contains(err.Error(), "report.jsonl:2:") {
		t.Fatalf("a torn line: got %+v, %v", outs, err)
	}
}
