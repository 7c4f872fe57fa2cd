package checker

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/execspec/execspec/model"
)

func TestSpeedProbe(t *testing.T) {
	if os.Getenv("PROBE") == "" {
		t.Skip()
	}
	a := func(k string) int { v, _ := strconv.Atoi(os.Getenv(k)); return v }
	c := model.Config{Policy: model.WorkSteal, Workers: a("W"), Tasks: a("T"), Pendings: a("K")}
	r, err := Explore(context.Background(), c, Options{Parallel: a("P"), Symmetry: os.Getenv("SYM") != "", Property: Property(os.Getenv("PROP"))})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s states=%d trans=%d %v %.0f st/s %.1f B/st", r.Verdict, r.States, r.Transitions, r.Elapsed, r.StatesPerSecond(), r.BytesPerState())
}
