package traces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
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
}

// Symptom is where a checker caught a bug whose root cause a Mark points at.
type Symptom struct {
	Index   int // into the events, from 0; -1 at the end of the run
	Message string
}

// MaxHTMLEvents bounds the events drawn in one page; a longer trace is
// shown as a window that ends shortly after the marked event (or the first
// MaxHTMLEvents events when nothing is marked). Open long traces in
// Perfetto through WriteChromeTrace instead.
const MaxHTMLEvents = 5000

// htmlEvent is one event as the page's script reads it.
type htmlEvent struct {
	I       int    `json:"i"`
	Seq     uint64 `json:"seq"`
	Kind    string `json:"kind"`
	Task    int64  `json:"task,omitempty"`
	Worker  int32  `json:"worker"`
	Victim  int32  `json:"victim"`
	Source  string `json:"source,omitempty"`
	Result  string `json:"result,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Text    string `json:"text"`
}

type htmlData struct {
	Header  Header      `json:"header"`
	Events  []htmlEvent `json:"events"`
	Offset  int         `json:"offset"`
	Total   int         `json:"total"`
	Mark    *Mark       `json:"mark"`
	Workers int         `json:"workers"`
}

// WriteHTML writes one self-contained page (inline CSS and script, no
// network) with a timeline of the trace: a lane for events from outside the
// workers and one per worker, each poll as a block from its take to its
// poll-end, steals and wakes as arrows, and, when mark is not nil, the
// violation: an element with id "violation" holding the message, and the
// offending event highlighted in the timeline and in the event table.
//
// The page is drawn by its script from the events embedded as JSON, so it
// needs a browser with JavaScript; it shows at most MaxHTMLEvents events.
func WriteHTML(w io.Writer, h Header, events []Event, mark *Mark) error {
	lo, hi := 0, len(events)
	if hi-lo > MaxHTMLEvents {
		if mark != nil && mark.Index >= 0 && mark.Index < len(events) {
			hi = min(len(events), mark.Index+50)
			lo = max(0, hi-MaxHTMLEvents)
		} else {
			hi = MaxHTMLEvents
		}
	}
	d := htmlData{Header: h, Offset: lo, Total: len(events), Mark: mark, Workers: h.Workers, Events: make([]htmlEvent, 0, hi-lo)}
	if d.Header.Config == nil {
		d.Header.Config = map[string]int{}
	}
	var buf []byte
	for i := lo; i < hi; i++ {
		e := events[i]
		he := htmlEvent{I: i, Seq: e.Seq, Kind: e.Kind.String(), Task: e.Task, Worker: e.Worker, Victim: -1, Text: string(AppendText(buf[:0], e))}
		if e.Source != SourceNone {
			he.Source = e.Source.String()
			if e.Source == SourceSteal {
				he.Victim = e.Victim
			}
		}
		if e.Result != ResultNone {
			he.Result = e.Result.String()
		}
		if e.Outcome != OutcomeNone {
			he.Outcome = e.Outcome.String()
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
	if h.Executor != "" {
		title += ": " + h.Executor
	}
	fmt.Fprintf(bw, htmlHead, html.EscapeString(title))
	bw.WriteString(`<script type="application/json" id="trace-data">`)
	bw.Write(data)
	bw.WriteString("</script>\n<script>\n")
	bw.WriteString(htmlScript)
	bw.WriteString("</script>\n</body>\n</html>\n")
	return bw.Flush()
}

const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px; }
#summary { color: #555; margin-bottom: 8px; }
#violation { border: 2px solid #c62828; background: #fdecea; padding: 8px 12px; margin: 8px 0; white-space: pre-wrap; }
#violation .rule { font-weight: bold; color: #c62828; }
#timeline-box { overflow-x: auto; border: 1px solid #ddd; }
svg text { font: 10px monospace; }
.lane-label { font: bold 11px system-ui, sans-serif; }
.poll { stroke: #333; stroke-width: .5; }
.poll.bad, .mark-col { stroke: #c62828; stroke-width: 2; }
.mark-col { fill: rgba(198,40,40,.12); }
.steal { stroke: #6a1b9a; stroke-width: 1.5; fill: none; }
.wake { stroke: #1565c0; stroke-width: 1; fill: none; stroke-dasharray: 3 2; }
.lost { stroke: #c62828; }
table { border-collapse: collapse; margin-top: 12px; font: 12px monospace; }
td, th { padding: 1px 8px; text-align: left; }
tr.bad { background: #fdecea; outline: 2px solid #c62828; }
tr:hover { background: #f3f3f3; }
#legend span { margin-right: 14px; }
</style>
</head>
<body>
<h1>%[1]s</h1>
<div id="summary"></div>
<div id="legend"><span>▮ poll (take → poll-end)</span><span style="color:#6a1b9a">→ steal (victim → thief)</span><span style="color:#1565c0">⇢ wake (waker → next take)</span><span>● spawn</span><span>▂ park</span></div>
<div id="violation" hidden></div>
<div id="timeline-box"><svg id="timeline" xmlns="http://www.w3.org/2000/svg"></svg></div>
<table id="events"><thead><tr><th>#</th><th>event</th></tr></thead><tbody></tbody></table>
<noscript>This page draws its timeline with JavaScript.</noscript>
`

const htmlScript = `(function () {
"use strict";
var d = JSON.parse(document.getElementById("trace-data").textContent);
var ev = d.events, W = d.workers, NS = "http://www.w3.org/2000/svg";
var mark = d.mark, markI = mark && mark.Index >= 0 ? mark.Index : -1;
function el(name, attrs, parent, text) {
  var e = document.createElementNS(NS, name);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function title(e, s) { el("title", {}, e, s); }
var h = d.header;
var cfg = Object.keys(h.config || {}).sort().map(function (k) { return k + "=" + h.config[k]; }).join(" ");
document.getElementById("summary").textContent =
  "executor " + (h.executor || "?") + ", policy " + (h.policy || "?") + (cfg ? " (" + cfg + ")" : "") +
  ", " + W + " workers, " + d.total + " events" +
  (ev.length < d.total ? "; showing events " + (d.offset + 1) + " to " + (d.offset + ev.length) : "");
var LH = 28, TOP = 20, LEFT = 70;
var DX = Math.max(4, Math.min(22, 1600 / Math.max(1, ev.length)));
function x(k) { return LEFT + (k + 0.5) * DX; }         // k: position in ev
function y(w) { return TOP + (w + 1) * LH; }             // w: worker, -1 outside
var svg = document.getElementById("timeline");
var width = LEFT + ev.length * DX + 40, height = TOP + (W + 1) * LH + 20;
svg.setAttribute("width", width); svg.setAttribute("height", height);
var defs = el("defs", {}, svg);
[["arrow-steal", "#6a1b9a"], ["arrow-wake", "#1565c0"], ["arrow-lost", "#c62828"]].forEach(function (a) {
  var m = el("marker", {id: a[0], viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse"}, defs);
  el("path", {d: "M0,0 L10,5 L0,10 z", fill: a[1]}, m);
});
for (var w = -1; w < W; w++) {
  el("line", {x1: LEFT, x2: width, y1: y(w), y2: y(w), stroke: "#eee"}, svg);
  el("text", {x: 4, y: y(w) + 4, "class": "lane-label"}, svg, w < 0 ? "outside" : "worker " + w);
}
var pos = {};
ev.forEach(function (e, k) { pos[e.i] = k; });
if (markI >= 0 && pos[markI] !== undefined) {
  var mc = el("rect", {x: x(pos[markI]) - DX / 2, y: TOP, width: DX, height: (W + 1) * LH + 10, "class": "mark-col", id: "violation-mark"}, svg);
  title(mc, ev[pos[markI]].text);
}
function color(t) { return "hsl(" + ((t * 47) % 360) + ",60%,72%)"; }
var open = {}, blocks = [];
ev.forEach(function (e, k) {
  if ((e.kind === "take" || e.kind === "poll-begin") && e.task && !open[e.task]) open[e.task] = {k: k, e: e};
  if (e.kind === "poll-end" && e.task) {
    var o = open[e.task] || {k: k, e: e};
    blocks.push({a: o.k, b: k, w: e.worker, task: e.task, result: e.result, bad: markI === e.i || markI === o.e.i, from: o.e.text, to: e.text});
    delete open[e.task];
  }
});
Object.keys(open).forEach(function (t) {
  var o = open[t];
  blocks.push({a: o.k, b: ev.length - 1, w: o.e.worker, task: +t, result: "running", bad: markI === o.e.i, from: o.e.text, to: "(still running at the end)"});
});
blocks.forEach(function (b) {
  var r = el("rect", {x: x(b.a) - DX / 2 + 1, y: y(b.w) - 9, width: Math.max(2, (b.b - b.a + 1) * DX - 2), height: 18,
    fill: color(b.task), rx: 3, "class": "poll" + (b.bad ? " bad" : "")}, svg);
  title(r, "t" + b.task + " on worker " + b.w + ": " + b.from + " … " + b.to);
  if ((b.b - b.a + 1) * DX > 22) el("text", {x: x(b.a) - DX / 2 + 4, y: y(b.w) + 4}, svg, "t" + b.task + (b.result === "ready" ? " ✓" : ""));
});
ev.forEach(function (e, k) {
  if (e.kind === "take" && e.source === "steal" && e.victim >= 0) {
    var p = el("path", {d: "M" + (x(k) - DX) + "," + y(e.victim) + " L" + x(k) + "," + (y(e.worker) + (e.victim < e.worker ? -9 : 9)), "class": "steal", "marker-end": "url(#arrow-steal)"}, svg);
    title(p, e.text);
  } else if (e.kind === "wake" && e.task) {
    var j = k + 1;
    while (j < ev.length && !(ev[j].task === e.task && ev[j].kind === "take")) j++;
    if (j < ev.length) {
      var q = el("path", {d: "M" + x(k) + "," + y(e.worker) + " C" + x(k) + "," + (y(e.worker) + y(ev[j].worker)) / 2 + " " + x(j) + "," + (y(e.worker) + y(ev[j].worker)) / 2 + " " + x(j) + "," + y(ev[j].worker),
        "class": "wake", "marker-end": "url(#arrow-wake)"}, svg);
      title(q, e.text + "  ⇢  " + ev[j].text);
    } else if (e.outcome !== "late" && e.outcome !== "coalesced") {
      var l = el("path", {d: "M" + x(k) + "," + y(e.worker) + " L" + (x(k) + 3 * DX) + "," + (y(e.worker) - 10), "class": "wake lost", "marker-end": "url(#arrow-lost)"}, svg);
      title(l, e.text + ": never taken afterwards");
    }
  } else if (e.kind === "spawn") {
    title(el("circle", {cx: x(k), cy: y(e.worker), r: 3, fill: color(e.task), stroke: "#333"}, svg), e.text);
  } else if (e.kind === "park") {
    title(el("rect", {x: x(k) - DX / 2, y: y(e.worker) + 6, width: DX, height: 3, fill: "#999"}, svg), e.text);
  } else if (e.kind === "panic") {
    title(el("text", {x: x(k) - 3, y: y(e.worker) - 11, fill: "#c62828"}, svg, "✗"), e.text);
  }
});
var tb = document.querySelector("#events tbody");
ev.forEach(function (e) {
  var tr = document.createElement("tr");
  tr.id = "ev-" + e.i;
  if (e.i === markI) tr.className = "bad";
  var a = document.createElement("td"); a.textContent = e.i + 1;
  var b = document.createElement("td"); b.textContent = e.text;
  tr.appendChild(a); tr.appendChild(b); tb.appendChild(tr);
});
if (mark) {
  var v = document.getElementById("violation");
  v.hidden = false;
  var s = document.createElement("span"); s.className = "rule"; s.textContent = (mark.Label || "violation") + (mark.Rule ? " of " + mark.Rule : "") + ": ";
  var m = document.createElement("span"); m.className = "msg"; m.textContent = mark.Message;
  v.appendChild(s); v.appendChild(m);
  if (markI >= 0) {
    var at = document.createElement("div"); at.className = "at";
    var a2 = document.createElement("a"); a2.href = "#ev-" + markI; a2.textContent = "at event " + (markI + 1) + (pos[markI] !== undefined ? ": " + ev[pos[markI]].text : "");
    at.appendChild(a2); v.appendChild(at);
  }
  v.setAttribute("data-rendered", "1");
}
})();
`
