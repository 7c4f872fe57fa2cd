package picture

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"slices"

	"github.com/execspec/execspec/traces"
)

// Mark points at the violation in a trace, for WriteHTML: the index of the
// offending event in the slice given, and the checker's message.
type Mark struct {
	Index   int    // into the events, from 0 (the page counts from 1); -1 when no one event is at fault
	Rule    string // the rule that failed, e.g. "WORKER-STEAL"; may be ""
	Message string
	// Label heads the message: "violation" when empty; "unknown" for a
	// trace whose verdict is unknown (tasks not DONE at its end); "root
	// cause" for the culprit of a counterexample whose Symptom is noted.
	Label string
	// Symptom, when not nil, is where the run's bug was caught (an
	// invariant or property), after the marked root cause.
	Symptom *Symptom `json:",omitempty"`
	// Links are other pages about the same run (a linearizability
	// report), shown under the message: name → relative URL.
	Links map[string]string `json:",omitempty"`
}

// Symptom is where a checker caught a bug whose root cause a Mark points at.
type Symptom struct {
	Index   int // into the events, from 0; -1 at the end of the run
	Message string
}

// MaxHTMLEvents bounds the events drawn in one page; a longer trace is
// shown as a window that ends shortly after the marked event (or the first
// MaxHTMLEvents events when nothing is marked), and the page says what it
// left out (how many events of each kind before and after) and starts from
// the state the events before the window left. Open long traces in
// Perfetto through WriteChromeTrace instead.
const MaxHTMLEvents = 2000

// htmlAfterMark is how many events after the marked one a window keeps.
const htmlAfterMark = 50

// htmlDetailMax bounds an event's detail in the page, in bytes.
const htmlDetailMax = 400

// htmlEvent is one event as the page's script reads it.
type htmlEvent struct {
	I       int       `json:"i"`
	Seq     uint64    `json:"seq"`
	Kind    string    `json:"kind"`
	Task    int64     `json:"task,omitempty"`
	Worker  int32     `json:"worker"`
	Victim  int32     `json:"victim"`
	Queue   int       `json:"queue"` // -1 global, w ≥ 0 local(w), -2 none
	Source  string    `json:"source,omitempty"`
	Result  string    `json:"result,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
	Rule    string    `json:"rule,omitempty"`
	Text    string    `json:"text"`
	Detail  string    `json:"detail,omitempty"`
	Change  *tlChange `json:"d,omitempty"`
}

type htmlData struct {
	Header  traces.Header  `json:"header"`
	Events  []htmlEvent    `json:"events"`
	Offset  int            `json:"offset"`
	Total   int            `json:"total"`
	Mark    *Mark          `json:"mark"`
	Workers int            `json:"workers"`
	Local   bool           `json:"local"`
	Start   tlSnapshot     `json:"start"`
	Before  map[string]int `json:"before,omitempty"` // kinds of the events before the window
	After   map[string]int `json:"after,omitempty"`  // and after it
}

// Timeline builds the HTML page of a trace incrementally, in bounded
// memory: it keeps the last MaxHTMLEvents events it was given (the window)
// and the state the events before them left, and counts the rest. Add
// costs O(1) amortized; memory is O(MaxHTMLEvents + tasks). The zero value
// is not usable (NewTimeline); a Timeline is not safe for concurrent use.
type Timeline struct {
	h      traces.Header
	base   *tlState // the state before the window's first event
	ring   []traces.Event
	start  int // index in ring of the window's first event
	first  int // trace index of the window's first event
	total  int
	hold   int // events from this index on are counted, not kept; -1: keep all
	before map[traces.Kind]int
	after  map[traces.Kind]int
}

// NewTimeline returns an empty timeline of a trace with header h.
func NewTimeline(h traces.Header) *Timeline {
	return &Timeline{h: h, base: newTLState(h), hold: -1, before: map[traces.Kind]int{}, after: map[traces.Kind]int{}}
}

// Add appends the next event of the trace.
func (tl *Timeline) Add(e traces.Event) {
	i := tl.total
	tl.total++
	if tl.hold >= 0 && i >= tl.hold {
		tl.after[e.Kind]++
		return
	}
	if len(e.Detail) > htmlDetailMax {
		e.Detail = e.Detail[:htmlDetailMax] + "…"
	}
	if len(tl.ring) < MaxHTMLEvents {
		tl.ring = append(tl.ring, e)
		return
	}
	old := &tl.ring[tl.start]
	tl.base.apply(old)
	tl.before[old.Kind]++
	tl.ring[tl.start] = e
	tl.start = (tl.start + 1) % len(tl.ring)
	tl.first++
}

// HoldFrom makes the timeline keep no event from trace index i on (it
// still counts them): a page about event i needs only a few events after
// it. Call it before adding event i.
func (tl *Timeline) HoldFrom(i int) {
	if tl.hold < 0 || i < tl.hold {
		tl.hold = i
	}
}

// Events returns how many events were added.
func (tl *Timeline) Events() int { return tl.total }

// WriteHTML writes one self-contained page (inline CSS and script, no
// network) with a timeline of the trace: see the package-level WriteHTML.
func (tl *Timeline) WriteHTML(w io.Writer, mark *Mark) error {
	d := htmlData{Header: tl.h, Offset: tl.first, Total: tl.total, Mark: mark, Workers: tl.h.Workers,
		Local: tl.base.local, Events: make([]htmlEvent, 0, len(tl.ring)), Start: tl.base.snapshot()}
	if d.Header.Config == nil {
		d.Header.Config = map[string]int{}
	}
	d.Before, d.After = kindCounts(tl.before), kindCounts(tl.after)
	s := tl.base.clone()
	var buf []byte
	for k := range tl.ring {
		e := tl.ring[(tl.start+k)%len(tl.ring)]
		s.apply(&e)
		detail := e.Detail
		e.Detail = ""
		he := htmlEvent{I: tl.first + k, Seq: e.Seq, Kind: e.Kind.String(), Task: e.Task, Worker: e.Worker, Victim: -1,
			Queue: -2, Text: string(traces.AppendText(buf[:0], e)), Detail: detail, Change: s.change()}
		switch {
		case e.Queue == traces.QueueGlobal:
			he.Queue = -1
		case e.Queue != traces.QueueNone:
			he.Queue = e.Queue.Worker()
		}
		if e.Source != traces.SourceNone {
			he.Source = e.Source.String()
			if e.Source == traces.SourceSteal {
				he.Victim = e.Victim
			}
		}
		if e.Result != traces.ResultNone {
			he.Result = e.Result.String()
		}
		if e.Outcome != traces.OutcomeNone {
			he.Outcome = e.Outcome.String()
		}
		if e.Rule != 0 {
			he.Rule = e.Rule.String()
		}
		d.Events = append(d.Events, he)
	}
	// encoding/json escapes <, > and &, so the data cannot end the script
	// element it sits in.
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("traces: html: %w", err)
	}
	bw := bufio.NewWriter(w)
	title := "execspec trace"
	if tl.h.Executor != "" {
		title += ": " + tl.h.Executor
	}
	fmt.Fprintf(bw, htmlHead, html.EscapeString(title))
	bw.WriteString(`<script type="application/json" id="trace-data">`)
	bw.Write(data)
	bw.WriteString("</script>\n<script>\n")
	bw.WriteString(htmlScript)
	bw.WriteString("</script>\n</body>\n</html>\n")
	return bw.Flush()
}

func kindCounts(m map[traces.Kind]int) map[string]int {
	if len(m) == 0 {
		return nil
	}
	out := map[string]int{}
	for k, n := range m {
		out[k.String()] = n
	}
	return out
}

func (s *tlState) clone() *tlState {
	c := *s
	c.global = s.global.clone()
	c.locals = make([]tlQ, len(s.locals))
	for w := range s.locals {
		c.locals[w] = s.locals[w].clone()
	}
	c.where = make(map[int64]tlWhere, len(s.where))
	for t, w := range s.where {
		w.more = slices.Clone(w.more)
		c.where[t] = w
	}
	c.cur = append([]int64{}, s.cur...)
	c.task = make(map[int64]string, len(s.task))
	for t, st := range s.task {
		c.task[t] = st
	}
	c.changedQ = map[int]bool{}
	c.changedT, c.changedC = nil, nil
	return &c
}

// WriteHTML writes one self-contained page (inline CSS and script, no
// network) that shows the mechanism of the run, for someone who has not
// read the rules. It uses the browser window's full width:
//
//   - a column per event, numbered as every view numbers events (from 1);
//   - a lane per worker with its polls as blocks from take to poll-end,
//     labelled by task and coloured by the poll's outcome (pending, ready,
//     panic, still running);
//   - the global queue and each worker's local deque as bands whose
//     contents change over time;
//   - a row per task with its state (QUEUED, RUNNING, NOTIFIED, WAITING,
//     DONE) over time;
//   - every wake as an arrow from the waker's lane to the task's row, with
//     its outcome; a coalesced, late or dropped wake is marked so (a dropped
//     wake in red); steals as arrows from the victim's deque to the thief;
//   - when mark is not nil, the root cause (or violation) and the symptom
//     marked in the picture and in the event table, an element with id
//     "violation" holding the message, and the page opened at that event.
//
// Clicking an event, or stepping with ← → (and Home, End), shows the whole
// state after it: every queue, what every worker polls, every task's state,
// and a model counterexample's own state. The state is what the trace says
// (see the rules in timeline.go), rebuilt from the events alone.
//
// At most MaxHTMLEvents events are drawn (see MaxHTMLEvents); the page
// needs a browser with JavaScript.
func WriteHTML(w io.Writer, h traces.Header, events []traces.Event, mark *Mark) error {
	tl := NewTimeline(h)
	hi := len(events)
	if hi > MaxHTMLEvents {
		if mark != nil && mark.Index >= 0 && mark.Index < len(events) {
			hi = min(len(events), max(mark.Index+htmlAfterMark, MaxHTMLEvents))
			if mark.Symptom != nil && mark.Symptom.Index > mark.Index && mark.Symptom.Index-mark.Index < MaxHTMLEvents-htmlAfterMark {
				hi = min(len(events), max(hi, mark.Symptom.Index+htmlAfterMark))
			}
		} else {
			hi = MaxHTMLEvents
		}
	}
	tl.HoldFrom(hi)
	for _, e := range events {
		tl.Add(e)
	}
	return tl.WriteHTML(w, mark)
}

const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width">
<title>%s</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 12px 16px; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px; }
#summary, #omitted { color: #555; margin-bottom: 4px; }
#violation { border: 2px solid #c62828; background: #fdecea; padding: 6px 12px; margin: 6px 0; white-space: pre-wrap; }
#violation .rule { font-weight: bold; color: #c62828; }
#violation .symptom { margin-top: 4px; color: #8a4b00; }
#violation a { color: #c62828; }
#legend { margin: 4px 0; }
#legend span { margin-right: 12px; white-space: nowrap; }
#legend i { display: inline-block; width: 12px; height: 10px; border: 1px solid #555; vertical-align: -1px; margin-right: 3px; }
#nav { margin: 4px 0; }
#nav button { font: inherit; }
#timeline-box { overflow-x: auto; border: 1px solid #ddd; width: 100%%; box-sizing: border-box; }
#timeline { display: block; }
svg text { font: 11px system-ui, sans-serif; }
svg .mono { font: 11px monospace; }
.lane-label { font-weight: bold; }
.band-label { fill: #555; }
.col:hover { fill: rgba(21,101,192,.06); }
.col.sel { fill: rgba(21,101,192,.10); stroke: #1565c0; stroke-width: 1.5; }
.poll { stroke: #333; stroke-width: .6; }
.steal { stroke: #6a1b9a; stroke-width: 2; fill: none; }
.wake { stroke: #1565c0; stroke-width: 2; fill: none; }
.wake.coalesced, .wake.late { stroke: #777; stroke-dasharray: 4 3; }
.wake.dropped { stroke: #c62828; stroke-width: 2.5; }
.drop-mark { fill: #c62828; font-weight: bold; }
.mark-root { fill: rgba(198,40,40,.13); stroke: #c62828; stroke-width: 2; }
.mark-symptom { fill: rgba(239,108,0,.12); stroke: #ef6c00; stroke-width: 2; stroke-dasharray: 6 3; }
#state { border: 1px solid #1565c0; background: #f5f9ff; padding: 6px 12px; margin: 8px 0; font: 12px/1.5 monospace; white-space: pre-wrap; }
table { border-collapse: collapse; margin-top: 12px; font: 12px monospace; }
td, th { padding: 1px 8px; text-align: left; }
tr.bad { background: #fdecea; outline: 2px solid #c62828; }
tr.symptom { background: #fff3e0; outline: 2px dashed #ef6c00; }
tr.sel { background: #e3f2fd; }
tr:hover { background: #f3f3f3; cursor: pointer; }
</style>
</head>
<body>
<h1>%[1]s</h1>
<div id="summary"></div>
<div id="omitted" hidden></div>
<div id="violation" hidden></div>
<div id="legend"><span><i style="background:#ffe0b2"></i>poll returned Pending</span><span><i style="background:#c8e6c9"></i>poll returned Ready</span><span><i style="background:#ffcdd2"></i>poll panicked</span><span><i style="background:#bbdefb"></i>still polling</span><span style="color:#1565c0">↓ wake (waker → task)</span><span style="color:#c62828">✗ wake dropped</span><span style="color:#777">= wake coalesced or late</span><span style="color:#6a1b9a">↗ steal (victim's deque → thief)</span><br><span>task rows:</span><span><i style="background:#bbdefb"></i>QUEUED</span><span><i style="background:#90caf9"></i>RUNNING</span><span><i style="background:#ffb74d"></i>NOTIFIED (woken while running: must run again)</span><span><i style="background:#e0e0e0"></i>WAITING (for a wake)</span><span><i style="background:#a5d6a7"></i>DONE</span></div>
<div id="nav"><button id="prev" type="button">◀ previous</button> <button id="next" type="button">next ▶</button> <span>or ← → keys; click an event to see the whole state after it</span></div>
<div id="timeline-box"><svg id="timeline" xmlns="http://www.w3.org/2000/svg"></svg></div>
<div id="state"></div>
<table id="events"><thead><tr><th>#</th><th>event</th></tr></thead><tbody></tbody></table>
<noscript>This page draws its timeline with JavaScript.</noscript>
`

const htmlScript = `(function () {
"use strict";
var d = JSON.parse(document.getElementById("trace-data").textContent);
var ev = d.events, W = d.workers, NS = "http://www.w3.org/2000/svg", n = ev.length;
var mark = d.mark, markI = mark && mark.Index >= 0 ? mark.Index : -1;
var symI = mark && mark.Symptom && mark.Symptom.Index >= 0 ? mark.Symptom.Index : -1;
function el(name, attrs, parent, text) {
  var e = document.createElementNS(NS, name);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function title(e, s) { el("title", {}, e, s); return e; }
function div(id) { return document.getElementById(id); }
var h = d.header;
var cfg = Object.keys(h.config || {}).sort().map(function (k) { return k + "=" + h.config[k]; }).join(" ");
div("summary").textContent = "executor " + (h.executor || "?") + ", policy " + (h.policy || "?") + (cfg ? " (" + cfg + ")" : "") +
  ", " + W + " workers, " + d.total + " events" + (n < d.total ? "; drawn: events " + (d.offset + 1) + " to " + (d.offset + n) : "");
function counts(m) { return Object.keys(m || {}).sort().map(function (k) { return m[k] + " " + k; }).join(", "); }
if (n < d.total) {
  var om = div("omitted"); om.hidden = false;
  om.textContent = "Left out: " + (d.before ? "events 1 to " + d.offset + " (" + counts(d.before) + "), drawn here as the state they left" : "") +
    (d.before && d.after ? "; " : "") + (d.after ? "events " + (d.offset + n + 1) + " to " + d.total + " (" + counts(d.after) + ")" : "") +
    ". Open the whole trace in Perfetto (verify check --chrome) or step through it with verify replay.";
}
// The state after each event, rebuilt by applying each event's changes.
var st = {q: {g: d.start.global}, c: {}, t: {}}, states = [];
(d.start.local || []).forEach(function (q, w) { st.q[w] = q; });
(d.start.cur || []).forEach(function (t, w) { st.c[w] = t; });
Object.keys(d.start.tasks || {}).forEach(function (t) { st.t[t] = d.start.tasks[t]; });
var seen = {}, order = [];
function see(t) { if (t && !seen[t]) { seen[t] = 1; order.push(+t); } }
function copy(o) { var r = {}; for (var k in o) r[k] = o[k]; return r; }
var initial = {q: copy(st.q), c: copy(st.c), t: copy(st.t)};
ev.forEach(function (e) {
  if (e.d) {
    if (e.d.q) { st.q = copy(st.q); for (var k in e.d.q) st.q[k] = e.d.q[k]; }
    if (e.d.c) { st.c = copy(st.c); for (var k2 in e.d.c) st.c[k2] = e.d.c[k2]; }
    if (e.d.t) { st.t = copy(st.t); for (var k3 in e.d.t) { st.t[k3] = e.d.t[k3]; } }
  }
  states.push(st);
  st = {q: st.q, c: st.c, t: st.t};
});
// Task rows: the tasks of the marked events first, then by appearance.
if (markI >= 0) ev.forEach(function (e) { if (e.i === markI) see(e.task); });
if (symI >= 0) ev.forEach(function (e) { if (e.i === symI) see(e.task); });
Object.keys(initial.t).forEach(see);
ev.forEach(function (e) { see(e.task); });
var MAXT = 24, tasks = order.slice(0, MAXT), rowOf = {};
// Geometry: the page's full width; a horizontal scroll only when the
// events need more than it.
var box = div("timeline-box"), svg = div("timeline");
var LEFT = 86, TOP = 56, LANE = 34, BAND = 24, TROW = 22;
// (Room is left for the page's vertical scrollbar, which appears only
// once the page is drawn.)
var avail = Math.max(600, box.clientWidth - 24);
var DX = Math.max(30, (avail - LEFT - 8) / Math.max(1, n));
function x(k) { return LEFT + (k + 0.5) * DX; }
var y = TOP, rows = [];
function row(kind, key, label, hgt, cls) { var r = {kind: kind, key: key, label: label, y: y, h: hgt, cls: cls}; rows.push(r); y += hgt; return r; }
var laneY = {};
laneY[-1] = row("lane", -1, "outside", LANE, "lane-label");
var bandY = {};
for (var w = 0; w < W; w++) {
  laneY[w] = row("lane", w, "worker " + w, LANE, "lane-label");
  if (d.local) bandY[w] = row("band", w, "deque w" + w, BAND, "band-label");
}
bandY.g = row("band", "g", "global queue", BAND, "band-label");
y += 8;
tasks.forEach(function (t) { rowOf[t] = row("task", t, "task t" + t, TROW, "lane-label"); });
var more = order.length - tasks.length;
if (more > 0) { row("note", 0, "+" + more + " tasks", TROW, "band-label"); }
var width = Math.max(avail, LEFT + n * DX + 8), height = y + 10;
svg.setAttribute("width", width); svg.setAttribute("height", height);
svg.setAttribute("data-width", Math.round(width));
var defs = el("defs", {}, svg);
[["arrow-steal", "#6a1b9a"], ["arrow-wake", "#1565c0"], ["arrow-dropped", "#c62828"], ["arrow-grey", "#777"]].forEach(function (a) {
  var m = el("marker", {id: a[0], viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"}, defs);
  el("path", {d: "M0,0 L10,5 L0,10 z", fill: a[1]}, m);
});
var gBack = el("g", {}, svg), gCols = el("g", {}, svg), gFront = el("g", {}, svg);
rows.forEach(function (r, i) {
  if (r.kind !== "band" && i % 2 === 0) el("rect", {x: 0, y: r.y, width: width, height: r.h, fill: "#fafafa"}, gBack);
  if (r.kind === "band") el("rect", {x: LEFT, y: r.y + 2, width: width - LEFT, height: r.h - 4, fill: "#f1f1f1"}, gBack);
  el("text", {x: 4, y: r.y + r.h / 2 + 4, "class": r.cls}, gBack, r.label);
});
// Column heads: the event's number and what it is.
function head(e) {
  if (e.kind === "wake") return "WAKE t" + e.task + " " + (e.outcome || "");
  if (e.kind === "step") return (e.rule || "step") + (e.task ? " t" + e.task : "");
  var s = e.kind + (e.task ? " t" + e.task : "");
  if (e.kind === "take") s = (e.source === "steal" ? "steal" : "take") + " t" + e.task;
  if (e.kind === "poll-end") s = "t" + e.task + " → " + e.result;
  return s;
}
var colRects = [];
ev.forEach(function (e, k) {
  var cr = el("rect", {x: x(k) - DX / 2, y: TOP - 34, width: DX, height: height - TOP + 30, "class": "col", fill: "transparent", "data-i": e.i}, gCols);
  title(cr, (e.i + 1) + ": " + e.text);
  colRects.push(cr);
  el("text", {x: x(k), y: TOP - 22, "text-anchor": "middle", "font-weight": "bold"}, gFront, String(e.i + 1));
  if (DX >= 56) el("text", {x: x(k), y: TOP - 8, "text-anchor": "middle", "font-size": "10"}, gFront, head(e).slice(0, Math.floor(DX / 6)));
});
function markCol(i, cls, label, id) {
  ev.forEach(function (e, k) {
    if (e.i !== i) return;
    var r = el("rect", {x: x(k) - DX / 2 + 1, y: TOP - 54, width: DX - 2, height: height - TOP + 52, "class": cls, id: id}, gBack);
    title(r, label + ": " + e.text);
    el("text", {x: x(k), y: TOP - 40, "text-anchor": "middle", fill: cls === "mark-root" ? "#c62828" : "#ef6c00", "font-weight": "bold", "class": "mark-label"}, gFront, label);
  });
}
if (markI >= 0) markCol(markI, "mark-root", mark.Symptom ? "root cause" : (mark.Label || "violation"), "violation-mark");
if (symI >= 0 && symI !== markI) markCol(symI, "mark-symptom", "symptom", "symptom-mark");
// Polls: a block per poll on its worker's lane.
var pollColor = {pending: "#ffe0b2", ready: "#c8e6c9", panic: "#ffcdd2", running: "#bbdefb"};
var open = {}, blocks = [];
(d.start.cur || []).forEach(function (t, w) { if (t) open[w] = {k: 0, task: t, from: "(polling when the window starts)"}; });
ev.forEach(function (e, k) {
  var take = e.kind === "take" || (e.kind === "step" && /^(POLL-LOCAL|GLOBAL-STEAL|WORKER-STEAL)$/.test(e.rule) && e.queue === -2);
  if ((take || e.kind === "poll-begin") && e.worker >= 0 && !(open[e.worker] && open[e.worker].task === e.task)) open[e.worker] = {k: k, task: e.task, from: e.text};
  if ((e.kind === "poll-end" || (e.kind === "step" && /^TASK-(SUSPEND|COMPLETE)$/.test(e.rule))) && e.worker >= 0) {
    var o = open[e.worker] || {k: k, task: e.task, from: e.text};
    blocks.push({a: o.k, b: k, w: e.worker, task: e.task, result: e.result || "pending", from: o.from, to: e.text});
    delete open[e.worker];
  }
});
Object.keys(open).forEach(function (w) { var o = open[w]; blocks.push({a: o.k, b: n - 1, w: +w, task: o.task, result: "running", from: o.from, to: "(still polling at the end)"}); });
blocks.forEach(function (b) {
  var L = laneY[b.w]; if (!L) return;
  var x0 = x(b.a) - DX / 2 + 3, wd = Math.max(4, (b.b - b.a + 1) * DX - 6);
  var r = el("rect", {x: x0, y: L.y + 5, width: wd, height: L.h - 10, rx: 4, fill: pollColor[b.result] || "#eee", "class": "poll", "data-task": b.task, "data-result": b.result}, gFront);
  title(r, "t" + b.task + " polled by worker " + b.w + ": " + b.from + " … " + b.to);
  if (wd > 24) el("text", {x: x0 + 5, y: L.y + L.h / 2 + 4}, gFront, "poll t" + b.task + (wd > 110 ? (b.result === "running" ? " (running)" : " → " + b.result) : ""));
});
// Bands and task rows: a box per run of equal content.
function qtext(q) { return q && q.n ? "[" + q.h.map(function (t) { return "t" + t; }).join(" ") + (q.n > q.h.length ? " +" + (q.n - q.h.length) : "") + "]" : "[]"; }
function runs(get, draw) {
  var a = 0, prev = get(-1);
  for (var k = 0; k <= n; k++) {
    var cur = k < n ? get(k) : null;
    if (k === n || cur !== prev) { if (k > a || k === n) draw(a, k - 1, prev); a = k; prev = cur; }
  }
}
Object.keys(bandY).forEach(function (key) {
  var r = bandY[key];
  runs(function (k) { return qtext(k < 0 ? initial.q[key] : states[k].q[key]); }, function (a, b, txt) {
    if (b < a || txt === "[]") return;
    var x0 = x(a) - DX / 2 + 2, wd = (b - a + 1) * DX - 4;
    var g = el("rect", {x: x0, y: r.y + 3, width: wd, height: r.h - 6, rx: 3, fill: "#e3f2fd", stroke: "#90caf9", "class": "queue", "data-queue": key}, gFront);
    title(g, r.label + " " + txt + " after events " + (ev[a].i + 1) + " to " + (ev[b].i + 1));
    el("text", {x: x0 + 4, y: r.y + r.h / 2 + 4, "class": "mono"}, gFront, txt.slice(0, Math.max(2, Math.floor(wd / 7))));
  });
});
var stateColor = {QUEUED: "#bbdefb", RUNNING: "#90caf9", NOTIFIED: "#ffb74d", WAITING: "#e0e0e0", DONE: "#a5d6a7"};
tasks.forEach(function (t) {
  var r = rowOf[t];
  runs(function (k) { return (k < 0 ? initial.t[t] : states[k].t[t]) || ""; }, function (a, b, s) {
    if (b < a || !s) return;
    var x0 = x(a) - DX / 2 + 1, wd = (b - a + 1) * DX - 2;
    var g = el("rect", {x: x0, y: r.y + 3, width: wd, height: r.h - 6, rx: 3, fill: stateColor[s] || "#eee", stroke: s === "NOTIFIED" ? "#e65100" : "#999", "class": "tstate", "data-task": t, "data-state": s}, gFront);
    title(g, "t" + t + " " + s + " after events " + (ev[a].i + 1) + " to " + (ev[b].i + 1));
    el("text", {x: x0 + 4, y: r.y + r.h / 2 + 4, "font-weight": s === "NOTIFIED" ? "bold" : "normal"}, gFront, s.slice(0, Math.max(1, Math.floor(wd / 7))));
  });
});
// Arrows: wakes from the waker's lane to the task's row; steals from the
// victim's deque to the thief; spawns as dots.
function actor(w) { return laneY[w] || laneY[-1]; }
var ghosted = {};
ev.forEach(function (e, k) {
  var isWake = e.kind === "wake" || (e.kind === "step" && e.rule === "WAKE");
  if (isWake && e.task) {
    var from = actor(e.worker), to = rowOf[e.task], oc = e.outcome || "scheduled";
    var y0 = from.y + from.h - 4, y1 = to ? to.y + 2 : height - 6;
    var cls = "wake " + oc, mk = oc === "dropped" ? "arrow-dropped" : (oc === "coalesced" || oc === "late" ? "arrow-grey" : "arrow-wake");
    var p = el("path", {d: "M" + (x(k) - 6) + "," + y0 + " L" + (x(k) - 6) + "," + y1, "class": cls, "marker-end": "url(#" + mk + ")", "data-outcome": oc, "data-task": e.task}, gFront);
    title(p, (e.i + 1) + ": " + e.text);
    var lab = oc === "dropped" ? "✗ dropped" : (oc === "coalesced" || oc === "late" ? "= " + oc : oc);
    var ly = to ? to.y - 4 : y1 - 4;
    el("text", {x: x(k) + 2, y: ly, "class": oc === "dropped" ? "drop-mark" : "", fill: oc === "dropped" ? "#c62828" : "#1565c0"}, gFront, lab.slice(0, Math.max(3, Math.floor(DX / 6))));
    if (oc === "dropped" && to && states[k].t[e.task] === "RUNNING" && !(ghosted[e.task] >= k)) {
      // What the rules say this wake does: RUNNING → NOTIFIED, until the
      // poll ends (and re-queues the task instead of leaving it WAITING).
      var b = k;
      while (b + 1 < n && states[b + 1].t[e.task] === "RUNNING") b++;
      ghosted[e.task] = b;
      var gx = x(k) + 2, gw = Math.max(20, x(b) + DX / 2 - 3 - gx);
      title(el("rect", {x: gx, y: to.y + 1, width: gw, height: to.h - 2, rx: 3, fill: "none", stroke: "#e65100", "stroke-width": 1.5, "stroke-dasharray": "5 3", "class": "ghost", "data-task": e.task}, gFront),
        "the rules say: a wake while t" + e.task + " is RUNNING marks it NOTIFIED, so that it is queued again when its poll returns Pending; this wake was dropped");
      el("text", {x: gx + 12, y: to.y + to.h / 2 + 4, fill: "#e65100", "font-style": "italic", "class": "ghost-label"}, gFront, "should be NOTIFIED (missing)".slice(0, Math.max(8, Math.floor(gw / 6.5))));
    }
    if (oc === "dropped" && to) {
      var cx = el("text", {x: x(k) - 6, y: to.y + to.h / 2 + 5, "text-anchor": "middle", "class": "drop-mark", "font-size": "16", "data-dropped": e.task}, gFront, "✗");
      title(cx, "this wake was dropped: t" + e.task + " was RUNNING and is not marked NOTIFIED, so nothing will poll it again");
    }
  } else if ((e.kind === "take" && e.source === "steal" && e.victim >= 0) || (e.kind === "step" && e.rule === "WORKER-STEAL" && e.queue === -2)) {
    var v = e.kind === "take" ? e.victim : -1;
    var src = bandY[v] || laneY[v];
    if (src) title(el("path", {d: "M" + (x(k) - DX / 2 + 4) + "," + (src.y + src.h / 2) + " L" + (x(k) - 2) + "," + (laneY[e.worker].y + laneY[e.worker].h / 2), "class": "steal", "marker-end": "url(#arrow-steal)"}, gFront), e.text);
  } else if (e.kind === "spawn" || (e.kind === "step" && e.rule === "SPAWN")) {
    title(el("circle", {cx: x(k), cy: actor(e.worker).y + actor(e.worker).h / 2, r: 4, fill: "#555"}, gFront), e.text);
  } else if (e.kind === "park") {
    title(el("rect", {x: x(k) - DX / 4, y: actor(e.worker).y + actor(e.worker).h - 8, width: DX / 2, height: 4, fill: "#999"}, gFront), e.text);
  } else if (e.kind === "panic") {
    title(el("text", {x: x(k) - 3, y: actor(e.worker).y + 12, fill: "#c62828"}, gFront, "✗"), e.text);
  }
});
// The event table.
var tb = document.querySelector("#events tbody"), trs = [];
ev.forEach(function (e, k) {
  var tr = document.createElement("tr");
  tr.id = "ev-" + e.i;
  if (e.i === markI) tr.className = "bad";
  else if (e.i === symI) tr.className = "symptom";
  var a = document.createElement("td"); a.textContent = e.i + 1;
  var b = document.createElement("td"); b.textContent = e.text;
  tr.appendChild(a); tr.appendChild(b); tb.appendChild(tr);
  tr.addEventListener("click", function () { select(k, true); });
  trs.push(tr);
});
// The mark.
var pos = {};
ev.forEach(function (e, k) { pos[e.i] = k; });
if (mark) {
  var vd = div("violation");
  vd.hidden = false;
  var s = document.createElement("span"); s.className = "rule"; s.textContent = (mark.Label || "violation") + (mark.Rule ? " (" + mark.Rule + ")" : "") + ": ";
  var m = document.createElement("span"); m.className = "msg"; m.textContent = mark.Message;
  vd.appendChild(s); vd.appendChild(m);
  if (markI >= 0) {
    var at = document.createElement("div"); at.className = "at";
    var a2 = document.createElement("a"); a2.href = "#ev-" + markI;
    a2.textContent = "at event " + (markI + 1) + (pos[markI] !== undefined ? ": " + ev[pos[markI]].text : " (before the events drawn)");
    at.appendChild(a2); vd.appendChild(at);
  }
  if (mark.Symptom) {
    var sy = document.createElement("div"); sy.className = "symptom";
    sy.textContent = "symptom, at " + (symI >= 0 ? "event " + (symI + 1) : "the end of the run") + ": " + mark.Symptom.Message;
    vd.appendChild(sy);
  }
  Object.keys(mark.Links || {}).sort().forEach(function (name) {
    var l = document.createElement("div"), a3 = document.createElement("a");
    a3.href = mark.Links[name]; a3.textContent = name; l.appendChild(a3); vd.appendChild(l);
  });
  vd.setAttribute("data-rendered", "1");
}
// Stepping: the selected event and the whole state after it.
var sel = -1;
function stateText(k) {
  var e = ev[k], s = states[k], out = [];
  out.push("event " + (e.i + 1) + " of " + d.total + ": " + e.text);
  if (e.i === markI) out.push((mark.Symptom ? "ROOT CAUSE: " : "VIOLATION: ") + mark.Message);
  if (e.i === symI) out.push("SYMPTOM: " + mark.Symptom.Message);
  out.push("", "state after it, as the trace tells it:");
  out.push("  global queue " + qtext(s.q.g));
  for (var w = 0; w < W; w++) out.push("  worker " + w + (s.c[w] ? " polls t" + s.c[w] : " idle") + (d.local ? "   deque " + qtext(s.q[w]) : ""));
  var ts = Object.keys(s.t).map(Number).sort(function (a, b) { return a - b; });
  out.push("  tasks " + ts.slice(0, 200).map(function (t) { return "t" + t + ":" + s.t[t]; }).join(" ") + (ts.length > 200 ? " …" : ""));
  if (e.detail) out.push("", "detail: " + e.detail);
  return out.join("\n");
}
function select(k, scroll) {
  if (n === 0) return;
  k = Math.max(0, Math.min(n - 1, k));
  if (sel >= 0) { colRects[sel].setAttribute("class", "col"); trs[sel].classList.remove("sel"); }
  sel = k;
  colRects[k].setAttribute("class", "col sel"); trs[k].classList.add("sel");
  div("state").textContent = stateText(k);
  document.body.setAttribute("data-selected", ev[k].i + 1);
  if (scroll && width > box.clientWidth) box.scrollLeft = Math.max(0, x(k) - box.clientWidth / 2);
}
colRects.forEach(function (r, k) { r.addEventListener("click", function () { select(k, false); }); });
div("prev").addEventListener("click", function () { select(sel - 1, true); });
div("next").addEventListener("click", function () { select(sel + 1, true); });
document.addEventListener("keydown", function (e) {
  var k = {ArrowLeft: sel - 1, ArrowRight: sel + 1, Home: 0, End: n - 1}[e.key];
  if (k === undefined) return;
  e.preventDefault();
  select(k, true);
});
var startAt = pos[markI] !== undefined ? pos[markI] : 0;
var hm = /^#event-(\d+)$/.exec(location.hash);
if (hm && pos[+hm[1] - 1] !== undefined) startAt = pos[+hm[1] - 1];
select(startAt, true);
if (markI >= 0 && pos[markI] !== undefined && width > box.clientWidth) box.scrollLeft = Math.max(0, x(pos[markI]) - box.clientWidth / 3);
})();
`
