package executor_test

import (
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/traces"
)

// BenchmarkKitRecording: the cost of a Kit's marks and recording, side by
// side: markedFIFO unmarked (no marks), markedFIFO without a recorder (Pushed and Took
// are a nil check), and markedFIFO recording into a traces.Log. Each task is
// one spawn, one take and one Ready poll.
//
//	go test -run XXX -bench KitRecording -count 5 ./executor
func BenchmarkKitRecording(b *testing.B) {
	const n = 10000
	cases := []struct {
		name string
		make func() (executor.Executor, *traces.Log)
	}{
		{"unmarked", func() (executor.Executor, *traces.Log) { return newUnmarkedFIFO(2), nil }},
		{"marked", func() (executor.Executor, *traces.Log) { return newMarkedFIFO(2, nil), nil }},
		{"recording", func() (executor.Executor, *traces.Log) {
			log := &traces.Log{}
			return newMarkedFIFO(2, log), log
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ex, log := c.make()
			defer ex.Close()
			start, iters := time.Now(), 0
			for b.Loop() {
				for range n {
					if _, err := ex.Spawn(ready); err != nil {
						b.Fatal(err)
					}
				}
				if err := ex.Wait(); err != nil {
					b.Fatal(err)
				}
				if log != nil {
					log.Reset()
				}
				iters++
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*n), "ns/task")
		})
	}
}

var ready = executor.FutureFunc(func(*executor.Context) (any, bool) { return nil, true })
