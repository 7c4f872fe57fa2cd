package check

import (
	"github.com/execspec/execspec/checker/conform"
)

// ReportCountsJSON (exported for encoding/json, which cannot fill an
// embedded pointer to an unexported type) holds the counts of a conformance report that --json
// prints besides the verdict: panics and errors (Ready(Err), format v1.1)
// apart, and what format v1.1 adds (spurious polls, no-task wakes, the
// executor's stop and the tasks it abandoned).
type ReportCountsJSON struct {
	Panics            int             `json:"panics"`
	Errors            int             `json:"errors"`
	SpuriousPolls     int             `json:"spurious_polls"`
	NoTaskWakes       int             `json:"no_task_wakes"`
	Stopped           bool            `json:"stopped,omitempty"`
	StopEvent         int             `json:"stop_event,omitempty"` // from 1
	AbandonedAtStop   []abandonedJSON `json:"abandoned_at_stop,omitempty"`
	PriorityUnchecked bool            `json:"priority_order_unchecked,omitempty"`
}

type abandonedJSON struct {
	Task  int64  `json:"task"`
	State string `json:"state"`
}

func reportCounts(rep *conform.Report) *ReportCountsJSON {
	c := &ReportCountsJSON{Panics: rep.PanicCount, Errors: rep.ErrorCount, SpuriousPolls: rep.SpuriousPolls, NoTaskWakes: rep.NoTaskWakes, Stopped: rep.Stopped, PriorityUnchecked: rep.PriorityUnchecked}
	if rep.Stopped {
		c.StopEvent = rep.StopIndex + 1
	}
	for _, a := range rep.Abandoned {
		c.AbandonedAtStop = append(c.AbandonedAtStop, abandonedJSON{Task: a.Task, State: a.State})
	}
	return c
}
