package lin

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/traces"
)

// linBigHistory is a legal history of about n operations from 8 workers.
func linBigHistory(n int) []traces.Event {
	// About 7 operations per task with one Pending: spawn, take, begin,
	// end, wake, take, begin, end.
	sim := newLinSim(1, 8, n/7, 1, bugNone)
	return sim.run(4 * n)
}

// BenchmarkLinearizabilityPerTask checks a 1e5-operation history from 8
// workers: per-task partitions, per-queue windows. "witness": the events
// carry Seq at the point where each took effect, as the executors record
// them, so each part is replayed in Seq order first; "search": Seq removed,
// so every part goes to the polynomial FIFO decision or porcupine.
//
//	go test ./checker/lin -run '^$' -bench LinearizabilityPerTask -count 5
func BenchmarkLinearizabilityPerTask(b *testing.B) {
	events := linBigHistory(100_000)
	noSeq := make([]traces.Event, len(events))
	for i, e := range events {
		e.Seq = 0
		noSeq[i] = e
	}
	h := linHeader
	h.Workers = 8
	for _, c := range []struct {
		name   string
		events []traces.Event
	}{{"witness", events}, {"search", noSeq}} {
		b.Run(c.name, func(b *testing.B) {
			var res Result
			for b.Loop() {
				var err error
				res, err = Check(h, c.events, Options{Complete: true, Budget: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
			}
			if res.Verdict != checker.Holds {
				b.Fatalf("%s", res.Summary())
			}
			b.ReportMetric(float64(res.Ops), "ops")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(res.Ops), "ns/op-checked")
		})
	}
}

// linFIFOHistory is a strict-FIFO history of n operations in which each
// interval reaches over about 2*width neighbours, so that there is no
// quiescent point: windowing cannot cut it and porcupine searches it whole.
// With illegal, the last take returns a value never pushed, so the search
// must exhaust every order of the operations before it can say Illegal.
func linFIFOHistory(n, width int, illegal bool, seed uint64) []QueueOp {
	r := rand.New(rand.NewPCG(seed, 1))
	var ops []QueueOp
	var q []int64
	next := int64(1)
	tick := uint64(100)
	for i := 0; i < n; i++ {
		tick += 10
		op := QueueOp{Client: i % (2 * width), Call: tick - 5 - uint64(r.IntN(10*width)), Return: tick + 5 + uint64(r.IntN(10*width))}
		if len(q) == 0 || r.IntN(2) == 0 {
			op.Kind, op.Value = Push, next
			q = append(q, next)
			next++
		} else {
			op.Kind, op.Value = TakeHead, q[0]
			q = q[1:]
		}
		ops = append(ops, op)
	}
	if illegal {
		for i := len(ops) - 1; i >= 0; i-- {
			if ops[i].Kind == TakeHead {
				ops[i].Value = 1 << 40
				break
			}
		}
	}
	return ops
}

// BenchmarkLinFIFOGrowth measures how porcupine's search time on one strict-FIFO
// window grows with its length and with how many operations overlap, legal
// and illegal, under a 2s budget per check (Unknown past it, counted in the
// unknown metric).
//
//	go test ./checker/lin -run '^$' -bench LinFIFOGrowth -benchtime 1x -count 5
func BenchmarkLinFIFOGrowth(b *testing.B) {
	for _, illegal := range []bool{false, true} {
		for _, width := range []int{1, 2, 4} {
			for _, n := range []int{25, 50, 100, 200, 400, 800} {
				name := fmt.Sprintf("legal=%v/width=%d/n=%d", !illegal, width, n)
				b.Run(name, func(b *testing.B) {
					ops := linFIFOHistory(n, width, illegal, 1)
					ws, err := linQueueWindows(ops, false)
					if err != nil || len(ws) != 1 {
						b.Fatalf("%d windows, %v: the history should not be cut", len(ws), err)
					}
					unknown := 0
					for b.Loop() {
						switch porcupine.CheckOperationsTimeout(linQueueModel("global"), ws[0].ops, 2*time.Second) {
						case porcupine.Unknown:
							unknown++
						case porcupine.Ok:
							if illegal {
								b.Fatal("an illegal history passed")
							}
						case porcupine.Illegal:
							if !illegal {
								b.Fatal("a legal history failed")
							}
						}
					}
					b.ReportMetric(float64(unknown), "unknown")
				})
			}
		}
	}
}

// BenchmarkLinFIFODecide is the polynomial decision on the windows where
// the search explodes: long, with wide overlaps, legal and illegal.
//
//	go test ./checker/lin -run '^$' -bench LinFIFODecide -count 5
func BenchmarkLinFIFODecide(b *testing.B) {
	for _, illegal := range []bool{false, true} {
		for _, n := range []int{1600, 100_000} {
			b.Run(fmt.Sprintf("legal=%v/width=8/n=%d", !illegal, n), func(b *testing.B) {
				ops := linFIFOHistory(n, 8, illegal, 1)
				ws, err := linQueueWindows(ops, false)
				if err != nil || len(ws) != 1 {
					b.Fatalf("%d windows, %v", len(ws), err)
				}
				for b.Loop() {
					v, _ := linFIFODecide(ws[0].ops)
					if (v == checker.Violated) != illegal || v == checker.Unknown {
						b.Fatalf("verdict %s", v)
					}
				}
			})
		}
	}
}
