package rt

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/execspec/execspec/properties/control/sched"
)

// A loop that only yields (GoschedLoop, the rewriter's goschedloop rule)
// yields once under control; a schedule of format version 1, made when it
// yielded at every iteration, replays with it doing so, and a version 1
// schedule read from a file stays version 1.
func TestGoschedLoopVersions(t *testing.T) {
	body := func(*testing.T) {
		for i := 0; i < 5; i++ {
			if GoschedLoop() {
				break
			}
		}
	}
	sc, err := Run(t, Config{}, body)
	if err != nil || sc.Steps != 1 || sc.Version != 0 {
		t.Fatalf("the loop took %d steps (version %d), want 1: %v", sc.Steps, sc.Version, err)
	}
	old, err := Run(t, Config{Strategy: sched.NewReplay(sched.Schedule{Version: 1})}, body)
	if err != nil || old.Steps != 5 || old.Version != 1 {
		t.Fatalf("replaying version 1 the loop took %d steps (version %d), want 5: %v", old.Steps, old.Version, err)
	}
	path := filepath.Join(t.TempDir(), "v1.schedule")
	if err := SaveSchedule(path, old, Meta{"case": "1"}); err != nil {
		t.Fatal(err)
	}
	loaded, _, err := LoadSchedule(path)
	if err != nil || loaded.Version != 1 {
		t.Fatalf("loaded version %d: %v", loaded.Version, err)
	}
	if err := Replay(t, loaded, body); err != nil {
		t.Fatalf("the version 1 schedule does not replay: %v", err)
	}
	loaded.Version = 0
	if err := Replay(t, loaded, body); !errors.Is(err, sched.ErrDiverged) {
		t.Fatalf("its choices replayed as version 2: %v", err)
	}
}
