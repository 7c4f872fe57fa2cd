package check

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/cmd/verify/internal/clitest"
	"github.com/execspec/execspec/traces"
)

// loadFrames replays a trace file the way the interactive replay does.
func loadFrames(t *testing.T, file string) *stepper {
	t.Helper()
	h, events, err := traces.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := conform.New(h)
	if err != nil {
		t.Fatal(err)
	}
	s := &stepper{title: "replaying " + file, init: conf.Lanes()}
	for i, e := range events {
		before := conf.Lanes()
		if err := conf.Step(e); err != nil {
			s.frames = append(s.frames, replayFrame{i: i, e: e, lanes: before, err: conf.Err()})
			break
		}
		s.frames = append(s.frames, replayFrame{i: i, e: e, lanes: conf.Lanes()})
	}
	s.total = len(s.frames)
	return s
}

// Stepping through a replay with keys read from an io.Reader: forward,
// back, to the end (the violation), to the start, and quit; each screen
// shows the event, its rule with the premise, and the state.
func TestReplayStepsBothWays(t *testing.T) {
	s := loadFrames(t, filepath.Join("..", "..", "..", "..", "examples", "traces", "lost_wakeup.jsonl"))
	var out bytes.Buffer
	keys := "\x1b[C\x1b[C \x1b[D" + "G" + "h" + "\x1b[H" + "q"
	shown := s.run(context.Background(), strings.NewReader(keys), &out, -1)
	want := []int{-1, 0, 1, 2, 1, 3, 2, -1}
	if !slices.Equal(shown, want) {
		t.Fatalf("positions shown %v, want %v", shown, want)
	}
	screens := strings.Split(out.String(), "\x1b[H\x1b[2J")[1:]
	if len(screens) != len(want) {
		t.Fatalf("%d screens, want %d", len(screens), len(want))
	}
	for _, c := range []struct {
		screen int
		want   []string
	}{
		{0, []string{"before event 1", "initial state:", "global []"}},
		{1, []string{"event 1 of 4: #1 out spawn t1 -> global", "rule SPAWN — premise: a task not yet spawned", "global [t1]"}},
		{3, []string{"event 3 of 4", "rule POLL-PENDING", "w0 polls t1"}},
		{5, []string{"event 4 of 4", "rule WAKE — premise: the task's waker is called; conclusion: WAITING → QUEUED; RUNNING → NOTIFIED", "VIOLATION of WAKE", "reported dropped, but t1 was RUNNING", "state before the event, unchanged:"}},
	} {
		clitest.WantAll(t, fmt.Sprintf("screen %d", c.screen), screens[c.screen], c.want...)
	}
}

// An interactive replay of a trace longer than replayMaxFrames keeps the
// last events — the violation and what led to it — not the first ones.
func TestReplayKeepsTheLastFrames(t *testing.T) {
	r := frameRing{max: replayMaxFrames}
	const n = replayMaxFrames + 7000
	for i := 0; i < n; i++ {
		r.push(replayFrame{i: i})
	}
	got := r.slice()
	if len(got) != replayMaxFrames || got[0].i != n-replayMaxFrames || got[len(got)-1].i != n-1 {
		t.Fatalf("kept %d frames, %d to %d; want the last %d, %d to %d", len(got), got[0].i, got[len(got)-1].i, replayMaxFrames, n-replayMaxFrames, n-1)
	}
	for k := 1; k < len(got); k++ {
		if got[k].i != got[k-1].i+1 {
			t.Fatalf("frame %d is event %d after %d", k, got[k].i, got[k-1].i)
		}
	}
}
