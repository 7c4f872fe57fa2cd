package explore

import (
	"context"
	"fmt"
	"testing"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/model"
)

// BenchmarkExplore measures the model checker on reference configurations,
// sequential and parallel, with and without symmetry reduction. Compare the
// states/s metric side by side (go test -bench Explore -count 5 ./checker/explore).
func BenchmarkExplore(b *testing.B) {
	for _, c := range []model.Config{
		{Policy: model.WorkSteal, Workers: 3, Tasks: 3, Pendings: 2},
		{Policy: model.WorkSteal, Workers: 3, Tasks: 4, Pendings: 1},
	} {
		for _, o := range []struct {
			name string
			opts Options
		}{
			{"seq", Options{Parallel: 1}},
			{"par", Options{}},
			{"symmetry", Options{Symmetry: true}},
			{"eventually-done", Options{Property: EventuallyDone}},
		} {
			b.Run(fmt.Sprintf("W%dT%dK%d/%s", c.Workers, c.Tasks, c.Pendings, o.name), func(b *testing.B) {
				var states int64
				for b.Loop() {
					r, err := Explore(context.Background(), c, o.opts)
					if err != nil || r.Verdict != checker.Holds {
						b.Fatal(err, r.Verdict)
					}
					states = r.States
				}
				b.ReportMetric(float64(states)*float64(b.N)/b.Elapsed().Seconds(), "states/s")
			})
		}
	}
}
