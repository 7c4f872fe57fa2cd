package traces

import (
	"pgregory.net/rapid"

	"github.com/execspec/execspec/model"
)

// genHeader and genEvent draw valid headers and events: every event Validate
// accepts can be drawn.
func genHeader() *rapid.Generator[Header] {
	return rapid.Custom(func(t *rapid.T) Header {
		h := Header{Format: Format, Version: Version,
			Executor: rapid.StringMatching(`[a-z][a-z0-9 -]{0,8}`).Draw(t, "executor"),
			Workers:  rapid.IntRange(1, 5).Draw(t, "workers"),
			Policy:   rapid.SampledFrom([]string{"", "fifo", "worksteal", "priority"}).Draw(t, "policy"),
		}
		if n := rapid.IntRange(0, 3).Draw(t, "nconfig"); n > 0 {
			h.Config = map[string]int{}
			for range n {
				h.Config[rapid.StringMatching(`[a-z][a-z-]{0,9}`).Filter(func(s string) bool {
					switch s {
					case "executor", "workers", "policy", "order", "unobserved", "slice-us":
						return false
					}
					return true
				}).Draw(t, "key")] = rapid.IntRange(-3, 1000).Draw(t, "value")
			}
		}
		if rapid.Bool().Draw(t, "v1.1") {
			h.Minor = 1
			h.Order = rapid.SampledFrom([]string{"", OrderSeq, OrderIntervals}).Draw(t, "order")
			if rapid.Bool().Draw(t, "hasUnobserved") {
				h.Unobserved = rapid.SliceOfNDistinct(rapid.SampledFrom(UnobservedNames[:]), 1, len(UnobservedNames), rapid.ID).Draw(t, "unobserved")
			}
			if rapid.Bool().Draw(t, "hasV11Config") {
				if h.Config == nil {
					h.Config = map[string]int{}
				}
				h.Config[rapid.SampledFrom(v11ConfigKeys).Draw(t, "v11key")] = rapid.IntRange(0, 1000).Draw(t, "v11value")
			}
		}
		return h
	})
}

func genEvent(h Header) *rapid.Generator[Event] {
	return rapid.Custom(func(t *rapid.T) Event {
		k := Kind(rapid.IntRange(1, int(KindStep)).Draw(t, "kind"))
		v11 := h.Minor >= 1
		if v11 && rapid.IntRange(0, 9).Draw(t, "stop") == 0 {
			k = KindStop
		}
		worker := func(name string, outside bool) int32 {
			lo := 0
			if outside {
				lo = -1
			}
			return int32(rapid.IntRange(lo, h.Workers-1).Draw(t, name))
		}
		e := Event{Kind: k, Seq: rapid.Uint64().Draw(t, "seq"), Victim: -1}
		noOpWake := v11 && k == KindWake && rapid.IntRange(0, 3).Draw(t, "noOpWake") == 0
		if !noTask[k] && !noOpWake && (needsTask[k] || rapid.Bool().Draw(t, "hasTask")) {
			e.Task = rapid.Int64Range(1, 1<<62).Draw(t, "task")
		}
		e.Worker = worker("worker", !needsWorker[k])
		switch k {
		case KindTake:
			e.Source = Source(rapid.IntRange(0, int(SourceLIFO)).Draw(t, "source"))
			if e.Source == SourceSteal {
				e.Victim = worker("victim", false)
			}
		case KindPollEnd:
			last := ResultPanic
			if v11 {
				last = ResultError
			}
			e.Result = Result(rapid.IntRange(1, int(last)).Draw(t, "result"))
		case KindWake:
			if !noOpWake {
				e.Outcome = Outcome(rapid.IntRange(0, int(OutcomeDropped)).Draw(t, "outcome"))
			}
		case KindStep:
			e.Rule = rapid.SampledFrom(model.Rules).Draw(t, "rule")
		}
		if k != KindStep && rapid.IntRange(0, 4).Draw(t, "hasRule") == 0 {
			e.Rule = rapid.SampledFrom(model.Rules).Draw(t, "rule")
		}
		if !noOpWake && hasQueue[k] && rapid.Bool().Draw(t, "hasQueue") {
			if q := rapid.IntRange(-1, h.Workers-1).Draw(t, "queue"); q < 0 {
				e.Queue = QueueGlobal
			} else {
				e.Queue = LocalQueue(q)
			}
		}
		if rapid.IntRange(0, 3).Draw(t, "hasCall") == 0 {
			e.Call = rapid.Uint64().Draw(t, "call")
			e.Return = rapid.Uint64().Draw(t, "ret")
		}
		if v11 {
			if hasFuture[k] && rapid.Bool().Draw(t, "hasFuture") {
				e.Future = rapid.Int64Range(1, 1<<63-1).Draw(t, "future")
			}
			if hasPriority[k] && h.Policy == "priority" && rapid.Bool().Draw(t, "hasPriority") {
				e.Priority, e.Prioritized = rapid.Int32().Draw(t, "priority"), true
			}
			if rapid.Bool().Draw(t, "hasTime") {
				e.Time = rapid.Int64Range(0, 1<<63-1).Draw(t, "time")
			}
		}
		if rapid.IntRange(0, 3).Draw(t, "hasDetail") == 0 {
			e.Detail = rapid.String().Draw(t, "detail")
		}
		return e
	})
}
