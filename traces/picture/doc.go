// Package picture draws a trace: from a Header and its Events (read with
// the traces package, recorded in a traces.Log, or a model checker's
// counterexample), it writes pictures a person opens in a browser. It only
// draws: a trace is checked by the checker packages, which hand it a Mark
// to show where a check failed.
//
// Vocabulary:
//   - The timeline is one self-contained HTML page (inline CSS and script,
//     no network) that shows the mechanism of a run: a lane per worker
//     with its polls, the queues as bands whose contents change, each
//     task's state on its row, wakes and steals as arrows (a dropped or
//     coalesced wake marked so), and every state a click or a ← → away.
//     The state it shows is what the events say, rebuilt from them alone
//     (the table at the top of timeline.go), not the model's.
//   - A Mark points at the event a checker blamed (the root cause or the
//     violation) and carries its message; its Symptom, when set, is where
//     the bug was caught. The page opens at the mark.
//   - A window: a page draws at most MaxHTMLEvents events. WriteHTML takes
//     a trace held in memory; a Timeline builds the same page while a
//     trace streams, in bounded memory, keeping the last events and the
//     state the events before them left.
//   - The Chrome trace is the trace-event JSON that Perfetto
//     (ui.perfetto.dev) and chrome://tracing open, for a whole long trace:
//     WriteChromeTrace for events in memory, ChromeWriter one event at a
//     time, in memory independent of the trace's length.
//
// The events need not be valid: any events make a page (a trace that its
// checker rejected is the one worth looking at). The header must pass
// traces.CheckHeader for the Chrome trace, which checks it first.
//
// Example:
//
//	r, err := traces.Open("run.jsonl")
//	defer r.Close()
//	tl := picture.NewTimeline(r.Header())
//	for e, err := range r.All() {
//		if err != nil { return err }
//		tl.Add(e)
//	}
//	err = tl.WriteHTML(w, &picture.Mark{Index: 6, Rule: "WAKE", Message: "lost wakeup"})
//
//	err = picture.WriteChromeTrace(w, h, events) // open it in ui.perfetto.dev
package picture
