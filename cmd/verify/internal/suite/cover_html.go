package suite

import (
	"fmt"
	"html/template"
	"io"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
	"github.com/execspec/execspec/properties/coverage"
)

// The coverage page: the figures, one bar per rule and per rule variant
// (visited / transitions the executor can take), the exclusions, and the
// classes of unvisited states with an example each. Static HTML, no
// script; every text goes through html/template's escaping.
var coverPage = template.Must(template.New("cover").Funcs(template.FuncMap{
	"pct": func(a, b int) float64 {
		if b <= 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	},
	"sub": func(a, b int) int { return a - b },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>execspec spec coverage: {{.Executor}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse;margin:1em 0}td,th{padding:2px 8px;text-align:left;vertical-align:top}
th{border-bottom:1px solid #888}.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{width:16em;height:0.9em;background:#eee;display:inline-block;position:relative}
.bar span{position:absolute;left:0;top:0;bottom:0;background:#3a7}
.zero{color:#b22}.rule td{font-weight:600;border-top:1px solid #ccc}
code{font-size:12px}
</style></head><body>
<h1>Spec coverage: {{.Executor}}, strategy {{.Strategy}}</h1>
{{with .R}}
<p>model: <code>{{.Config}}</code></p>
<table>
<tr><td>reachable states</td><td class="num">{{.ModelStates}}</td><td>excluded {{.ExcludedStates}}</td>
<td class="num">visited {{.VisitedStates}}</td><td><div class="bar"><span style="width:{{printf "%.1f" .StatePercent}}%"></span></div> {{printf "%.1f" .StatePercent}}%</td></tr>
<tr><td>transitions</td><td class="num">{{.ModelTransitions}}</td><td>excluded {{.ExcludedTransitions}}</td>
<td class="num">visited {{.VisitedTransitions}}</td><td><div class="bar"><span style="width:{{printf "%.1f" .TransitionPercent}}%"></span></div> {{printf "%.1f" .TransitionPercent}}%</td></tr>
</table>
<p>{{.Runs}} runs, {{.Events}} events projected; <b{{if .Outside}} class="zero"{{end}}>{{.Outside}} outside the model</b>; {{.Left}} left the configuration.</p>
{{range .Failures}}<p class="zero">FAILURE: {{.}}</p>{{end}}
<h2>Per rule and rule variant</h2>
<table><tr><th>rule / variant</th><th class="num">visited</th><th class="num">of</th><th></th><th class="num">fired</th><th class="num">excluded</th></tr>
{{range .Rules}}{{$r := .Rule}}
<tr class="rule"><td>{{.Variant}}</td><td class="num">{{.Visited}}</td><td class="num">{{sub .Transitions .Excluded}}</td>
<td><div class="bar"><span style="width:{{printf "%.1f" (pct .Visited (sub .Transitions .Excluded))}}%"></span></div></td><td class="num">{{.Fired}}</td><td class="num">{{.Excluded}}</td></tr>
{{range $.R.Variants}}{{if eq .Rule $r}}
<tr><td>&nbsp;&nbsp;{{.Variant}}</td><td class="num{{if and (not .Visited) (gt (sub .Transitions .Excluded) 0)}} zero{{end}}">{{.Visited}}</td><td class="num">{{sub .Transitions .Excluded}}</td>
<td><div class="bar"><span style="width:{{printf "%.1f" (pct .Visited (sub .Transitions .Excluded))}}%"></span></div></td><td class="num">{{.Fired}}</td><td class="num">{{.Excluded}}</td></tr>
{{end}}{{end}}{{end}}
</table>
<h2>Excluded by design</h2>
<table><tr><th>exclusion</th><th class="num">states</th><th>why</th></tr>
{{range .Exclusions}}<tr><td>{{.Name}}</td><td class="num">{{.States}}</td><td>{{.Reason}}</td></tr>{{end}}
</table>
<h2>Unvisited states, by class</h2>
<table><tr><th class="num">states</th><th>class</th><th>a shallowest example (depth)</th></tr>
{{range .Unvisited}}<tr><td class="num">{{.States}}</td><td>{{.Class}}</td><td><code>{{.Example}}</code> ({{.Depth}})</td></tr>{{end}}
</table>
<h2>Unvisited transitions, by rule variant and the class of the state they leave</h2>
<table><tr><th class="num">transitions</th><th>variant, from</th><th>a shallowest state they leave (depth)</th></tr>
{{range .UnvisitedTransitions}}<tr><td class="num">{{.States}}</td><td>{{.Class}}</td><td><code>{{.Example}}</code> ({{.Depth}})</td></tr>{{end}}
</table>
{{end}}
</body></html>
`))

// writeCoverHTML writes the coverage page to name, as every output file
// is written (cli.WriteFile): whole or not at all, never through a symbolic
// link, never replacing a device or a pipe.
func writeCoverHTML(name string, f *coverFlags, res *coverage.Result) error {
	data := struct {
		Executor, Strategy string
		R                  any
	}{f.executor, res.Strategy, res.JSON()}
	if err := cli.WriteFile(name, func(w io.Writer) error { return coverPage.Execute(w, data) }); err != nil {
		return fmt.Errorf("--html %s: %w", name, err)
	}
	return nil
}
