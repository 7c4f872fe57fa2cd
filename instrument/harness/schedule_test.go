package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt"
	"github.com/execspec/execspec/properties/control/sched"
)

func TestSaveScheduleRefusesBadMeta(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []Meta{{"Bad Key": "x"}, {"ok": "two\nlines"}} {
		if err := SaveSchedule(filepath.Join(dir, "s"), sched.Schedule{}, m); err == nil {
			t.Errorf("%v: saved", m)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "bad"), []byte("# case: 1\nnot a schedule\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadSchedule(filepath.Join(dir, "bad")); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("a bad file: %v", err)
	}
}

// A saved schedule carries the process's mode of early timers beside its
// Meta, and a file whose mode this build does not know is refused,
// naming the file.
func TestScheduleFileMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.schedule")
	if err := SaveSchedule(path, sched.Schedule{Steps: 1}, Meta{"case": "1"}); err != nil {
		t.Fatal(err)
	}
	k, v, _ := strings.Cut(rt.ModeComment(), ": ")
	if _, meta, err := LoadSchedule(path); err != nil || meta[k] != v || meta["case"] != "1" {
		t.Fatalf("loaded %v, %v; want %s: %s and the case", meta, err, k, v)
	}
	bad := filepath.Join(dir, "bad.schedule")
	if err := os.WriteFile(bad, []byte("# rt.early-timers: 3\nexecspec-schedule v2\nsteps 1\nchecksum 0\nchoices 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadSchedule(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `"3": expected 0`) {
		t.Errorf("an unknown mode: %v", err)
	}
}
