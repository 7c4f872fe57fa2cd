package sched

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
)

func TestScheduleBadInput(t *testing.T) {
	good := "execspec-schedule v1\nsteps 10\nchecksum 00000000000000ff\nchoices 2\n0/2 1/3!\n"
	var s Schedule
	if err := s.UnmarshalText([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, want string }{
		{"", "line 1: empty"},
		{"execspec-schedule v3\n", `line 1: "execspec-schedule v3": this build reads schedule format versions 1 to 2`},
		{"execspec-schedule\n", "line 1: expected"},
		{"execspec-schedule v2\nsteps x\n", "line 2: steps"},
		{"execspec-schedule v1\nsteps x\n", "line 2: steps"},
		{"execspec-schedule v1\nsteps 1\nsum 0\n", "line 3: expected \"checksum\""},
		{"execspec-schedule v1\nsteps 1\nchecksum zz\n", "line 3: checksum"},
		{"execspec-schedule v1\nsteps 1\nchecksum 0\nchoices -1\n", "line 4: choices"},
		{"execspec-schedule v1\nsteps 1\nchecksum 0\nchoices 2\n0/2\n", "line 6: expected 2 choices, found 1"},
		{"execspec-schedule v1\nsteps 1\nchecksum 0\nchoices 1\n2/2\n", "line 5: expected a choice"},
		{"execspec-schedule v1\nsteps 1\nchecksum 0\nchoices 1\n0/1\n", "line 5: expected a choice"},
		{"execspec-schedule v1\nsteps 1\nchecksum 0\nchoices 1\n0/2 1/2\n", "line 5: more choices"},
		{"execspec-schedule v1\nsteps 1\nchecksum 0\nchoices 1\n0/2\nextra\n", "line 6: unexpected"},
	} {
		err := s.UnmarshalText([]byte(tc.text))
		if !errors.Is(err, ErrScheduleSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("loading a missing file succeeded")
	}
}

// Schedules are written in format version 2; a version 1 file reads as
// Version 1 and is written back as it was (instrument/rt replays it as
// version 1 runs chose).
func TestScheduleVersions(t *testing.T) {
	v1 := "execspec-schedule v1\nsteps 10\nchecksum 00000000000000ff\nchoices 2\n0/2 1/3!\n"
	var s Schedule
	if err := s.UnmarshalText([]byte(v1)); err != nil || s.Version != 1 {
		t.Fatalf("version 1 read as %d: %v", s.Version, err)
	}
	if again, err := s.MarshalText(); err != nil || string(again) != v1 {
		t.Fatalf("version 1 written back as %q: %v", again, err)
	}
	s.Version = 0
	v2, err := s.MarshalText()
	if err != nil || !strings.HasPrefix(string(v2), "execspec-schedule v2\n") {
		t.Fatalf("a new schedule is written as %q: %v", v2, err)
	}
	var back Schedule
	if err := back.UnmarshalText(v2); err != nil || back.Version != 0 {
		t.Fatalf("version 2 read as %d: %v", back.Version, err)
	}
	if _, err := (Schedule{Version: 3}).MarshalText(); !errors.Is(err, ErrScheduleSyntax) {
		t.Fatalf("version 3 written: %v", err)
	}
}

func FuzzScheduleText(f *testing.F) {
	f.Add([]byte("execspec-schedule v1\nsteps 10\nchecksum 00000000000000ff\nchoices 2\n0/2 1/3!\n"))
	f.Add([]byte("execspec-schedule v1\nsteps 0\nchecksum 0\nchoices 0\n\n"))
	f.Add([]byte("execspec-schedule v2\nsteps 3\nchecksum 1\nchoices 1\n1/2!\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		var s Schedule
		if err := s.UnmarshalText(text); err != nil {
			if !errors.Is(err, ErrScheduleSyntax) {
				t.Fatalf("error does not wrap ErrScheduleSyntax: %v", err)
			}
			return
		}
		again, _ := s.MarshalText()
		var back Schedule
		if err := back.UnmarshalText(again); err != nil || !reflect.DeepEqual(s, back) {
			t.Fatalf("re-parse: %v\n%s", err, again)
		}
	})
}

func TestTestdataPath(t *testing.T) {
	got := TestdataPath("TestSuite/worksteal/lost wakeup#01")
	want := filepath.Join("testdata", "schedules", "TestSuite_worksteal_lost_wakeup_01.schedule")
	if got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// TestSaveRefusesALink: a schedule is written whole, and never through a
// symbolic link planted where it goes (its directory may be shared).
func TestSaveRefusesALink(t *testing.T) {
	planted := testenv.PlantLink(t, t.TempDir(), "TestX.schedule")
	path := planted.Link
	s := Schedule{Steps: 3, Checksum: 7}
	if err := s.Save(path); err == nil {
		t.Fatal("saved through a symbolic link")
	}
	planted.Kept(t)
	os.Remove(path)
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil || got.Steps != 3 || got.Checksum != 7 {
		t.Fatalf("saved and loaded: %+v, %v", got, err)
	}
}

// Replay.Check passes a run that made every recorded choice and
// reproduced the steps and checksum, and names each way a run can part
// from its schedule: a choice refused, choices left over, other steps or
// another checksum.
func TestReplayCheck(t *testing.T) {
	want := Schedule{Choices: []Choice{{Index: 1, Of: 2}, {Index: 0, Of: 2}}, Steps: 5, Checksum: 0xab}
	two := Decision{Runnable: []int{0, 1}}
	run := func(decisions []Decision, got Schedule) error {
		r := NewReplay(want)
		r.Begin()
		for _, d := range decisions {
			if r.Choose(d) < 0 {
				break
			}
		}
		return r.Check(got)
	}
	if err := run([]Decision{two, two}, want); err != nil {
		t.Fatalf("a faithful run: %v", err)
	}
	for name, err := range map[string]error{
		"goroutines can run":        run([]Decision{two, {Runnable: []int{0, 1, 2}}}, want),
		"after 1 of":                run([]Decision{two}, want),
		"6 steps":                   run([]Decision{two, two}, Schedule{Steps: 6, Checksum: 0xab}),
		"checksum 00000000000000ac": run([]Decision{two, two}, Schedule{Steps: 5, Checksum: 0xac}),
	} {
		if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), name) {
			t.Errorf("want a divergence naming %q: %v", name, err)
		}
	}
}
