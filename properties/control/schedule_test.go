package control

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestScheduleRoundTrip(t *testing.T) {
	noLeak(t)
	c := New(Random(8))
	prog, _ := poolProgram(c, 3, 20, false)
	mustRun(t, c, prog)
	s := c.Schedule()
	if len(s.Choices) < 40 {
		t.Fatalf("only %d choices", len(s.Choices))
	}
	text, err := s.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var back Schedule
	if err := back.UnmarshalText(text); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !reflect.DeepEqual(s, back) {
		t.Fatalf("round trip differs:\n%s", text)
	}
	path := filepath.Join(t.TempDir(), "testdata", "pool.schedule")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil || !reflect.DeepEqual(s, loaded) {
		t.Fatalf("load: %v", err)
	}
	prog, _ = poolProgram(c, 3, 20, false)
	if err := c.Replay(prog, loaded); err != nil {
		t.Fatal(err)
	}
}
