package cover

import (
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Coverage accumulates the states and transitions of a Space that
// recorded runs visited. Add projects one run. A Coverage is not safe for
// concurrent use; its zero value is not usable (New). Memory: two
// bits per state and per transition of the space.
type Coverage struct {
	sp      *Space
	state   []bool
	edge    []bool
	firings []int64 // per variant: instances fired, counting repeats

	visitedStates, visitedEdges int

	runs, left, failed int
	events             int64
	leftWhy            map[string]int
	failures           []error // the first covMaxFailures
	spare              *projector
}

const covMaxFailures = 20

// New returns an empty Coverage of sp.
func New(sp *Space) *Coverage {
	cv := &Coverage{
		sp:      sp,
		state:   make([]bool, sp.States()),
		edge:    make([]bool, sp.Transitions()),
		firings: make([]int64, len(sp.variants)),
		leftWhy: map[string]int{},
	}
	cv.markState(0) // every run starts in the initial state
	return cv
}

// Space returns the space the coverage is measured on.
func (cv *Coverage) Space() *Space { return cv.sp }

func (cv *Coverage) markState(id int32) bool {
	if cv.state[id] {
		return false
	}
	cv.state[id] = true
	cv.visitedStates++
	return true
}

// VisitedStates returns how many states were visited so far (O(1)).
func (cv *Coverage) VisitedStates() int { return cv.visitedStates }

// Visited reports whether state id was visited.
func (cv *Coverage) Visited(id int) bool { return cv.state[id] }

// VisitedEdge reports whether transition e of the space was taken.
func (cv *Coverage) VisitedEdge(e int) bool { return cv.edge[e] }

// Add projects one recorded run, with header h and its events in Seq
// order, and adds what it visited. It fails only when the header cannot be
// projected onto the space (another policy, other parameters) or an event
// cannot be read; conformance failures are in the result.
func (cv *Coverage) Add(h traces.Header, events iter.Seq2[traces.Event, error]) (ProjectResult, error) {
	var r ProjectResult
	p, err := cv.sp.newProjector(h, cv.spare)
	if err != nil {
		return r, err
	}
	cv.runs++
	stopped := false
	idx := 0
	for e, err := range events {
		if err != nil {
			return r, err
		}
		i := idx
		idx++
		if r.Err != nil {
			continue
		}
		if err := p.conf.Step(e); err != nil {
			r.Err = err
			continue
		}
		if stopped {
			continue
		}
		path, left, err := p.step(i, &e)
		switch {
		case err != nil:
			r.Err = err
			stopped = true
			continue
		case left != "":
			r.Left = left
			stopped = true
			continue
		}
		r.Events = i + 1
		for _, ed := range path {
			newS, newE := cv.fire(p, ed)
			if newS {
				r.NewStates++
			}
			if newE {
				r.NewTransitions++
			}
		}
	}
	cv.spare = p
	cv.events += int64(r.Events)
	r.Conformance = p.conf.Finish()
	if r.Err == nil && r.Conformance.Err != nil {
		r.Err = r.Conformance.Err
	}
	if r.Err != nil {
		cv.failed++
		if len(cv.failures) < covMaxFailures {
			cv.failures = append(cv.failures, r.Err)
		}
	}
	if r.Left != "" {
		cv.left++
		cv.leftWhy[leftClass(r.Left)]++
	}
	return r, nil
}

// leftClass drops the task numbers from a reason, so that reasons group.
func leftClass(s string) string {
	var b strings.Builder
	skip := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == 't' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' && (i == 0 || s[i-1] == ' ') {
			b.WriteString("a task")
			skip = true
			continue
		}
		if skip && ch >= '0' && ch <= '9' {
			continue
		}
		skip = false
		b.WriteByte(ch)
	}
	return b.String()
}

// fire marks transition ed (from p's state) and its target, and moves
// p's state id. It reports what was new.
func (cv *Coverage) fire(p *projector, ed int32) (newState, newEdge bool) {
	e := &cv.sp.edges[ed]
	cv.firings[e.variant]++
	if !cv.edge[ed] {
		cv.edge[ed] = true
		cv.visitedEdges++
		newEdge = true
	}
	p.id = e.dst
	return cv.markState(e.dst), newEdge
}

// VariantCount is the coverage of one rule variant.
type VariantCount struct {
	Variant     string     `json:"variant"`
	Rule        model.Rule `json:"rule"`
	Transitions int        `json:"transitions"`          // in the space
	Excluded    int        `json:"excluded_transitions"` // of those, excluded
	Visited     int        `json:"visited_transitions"`  // distinct ones taken
	Fired       int64      `json:"fired"`                // instances fired, counting repeats
}

// UnvisitedClass is a class of unvisited states, with one of them; or, in
// Report.UnvisitedTransitions, a group of unvisited transitions (States
// counts the transitions), with a state they leave.
type UnvisitedClass struct {
	Class   string `json:"class"`
	States  int    `json:"states"`
	Example string `json:"example"`
	Depth   int    `json:"depth"` // of the example: the shortest path to it has this many steps
}

// ExcludedCount is what one exclusion cuts off.
type ExcludedCount struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
	States int    `json:"states"`
}

// Report is a snapshot of a Coverage.
type Report struct {
	Config string `json:"config"`

	ModelStates         int `json:"model_states"`
	ModelTransitions    int `json:"model_transitions"`
	ExcludedStates      int `json:"excluded_states"`
	ExcludedTransitions int `json:"excluded_transitions"`
	VisitedStates       int `json:"visited_states"`
	VisitedTransitions  int `json:"visited_transitions"`
	// Outside counts the runs that reached a state outside the reachable
	// set, or violated the open model: conformance failures.
	Outside  int      `json:"outside"`
	Failures []string `json:"failures,omitempty"`

	Runs   int   `json:"runs"`
	Events int64 `json:"events"`
	// Left counts the runs whose workload left the configuration (their
	// projection stopped there), by reason.
	Left    int            `json:"left_configuration"`
	LeftWhy map[string]int `json:"left_reasons,omitempty"`

	Exclusions []ExcludedCount  `json:"exclusions"`
	Rules      []VariantCount   `json:"rules"` // per rule: its variants summed (Variant is the rule's name)
	Variants   []VariantCount   `json:"variants"`
	Unvisited  []UnvisitedClass `json:"unvisited_classes"`
	// UnvisitedTransitions groups the transitions never taken by rule
	// variant and the class of the state they leave.
	UnvisitedTransitions []UnvisitedClass `json:"unvisited_transition_classes"`
}

// AllVariantsFired reports whether every rule variant the executor can
// take (some transition of it not excluded) fired at least once, and names
// those that did not.
func (r *Report) AllVariantsFired() (bool, []string) {
	var missing []string
	for _, v := range r.Variants {
		if v.Transitions > v.Excluded && v.Fired == 0 {
			missing = append(missing, v.Variant)
		}
	}
	return len(missing) == 0, missing
}

// StatePercent and TransitionPercent are the visited share of what the
// executor can reach (the space minus the excluded part).
func (r *Report) StatePercent() float64 {
	return pct(r.VisitedStates, r.ModelStates-r.ExcludedStates)
}

func (r *Report) TransitionPercent() float64 {
	return pct(r.VisitedTransitions, r.ModelTransitions-r.ExcludedTransitions)
}

func pct(a, b int) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Report returns the figures so far. maxClasses bounds the unvisited
// classes listed (0: all), largest first.
func (cv *Coverage) Report(maxClasses int) *Report {
	sp := cv.sp
	r := &Report{
		Config:              sp.cfg.String(),
		ModelStates:         sp.States(),
		ModelTransitions:    sp.Transitions(),
		ExcludedStates:      sp.nExclStates,
		ExcludedTransitions: sp.nExclEdges,
		VisitedStates:       cv.visitedStates,
		VisitedTransitions:  cv.visitedEdges,
		Outside:             cv.failed,
		Runs:                cv.runs,
		Events:              cv.events,
		Left:                cv.left,
	}
	for _, f := range cv.failures {
		r.Failures = append(r.Failures, f.Error())
	}
	if len(cv.leftWhy) > 0 {
		r.LeftWhy = map[string]int{}
		for k, v := range cv.leftWhy {
			r.LeftWhy[k] = v
		}
	}
	byX := make([]int, len(sp.exclusions))
	for i, x := range sp.exclReason {
		if sp.excluded[i] && x >= 0 {
			byX[x]++
		}
	}
	for k, x := range sp.exclusions {
		r.Exclusions = append(r.Exclusions, ExcludedCount{Name: x.Name, Reason: x.Doc, States: byX[k]})
	}
	r.Variants = make([]VariantCount, len(sp.variants))
	for i, v := range sp.variants {
		r.Variants[i] = VariantCount{Variant: v, Rule: variantRule(v), Fired: cv.firings[i]}
	}
	for i, ed := range sp.edges {
		vc := &r.Variants[ed.variant]
		vc.Transitions++
		if ed.excl {
			vc.Excluded++
		}
		if cv.edge[i] {
			vc.Visited++
		}
	}
	sort.SliceStable(r.Variants, func(a, b int) bool { return r.Variants[a].Rule < r.Variants[b].Rule })
	for _, v := range r.Variants {
		if n := len(r.Rules); n == 0 || r.Rules[n-1].Rule != v.Rule {
			r.Rules = append(r.Rules, VariantCount{Variant: v.Rule.String(), Rule: v.Rule})
		}
		x := &r.Rules[len(r.Rules)-1]
		x.Transitions += v.Transitions
		x.Excluded += v.Excluded
		x.Visited += v.Visited
		x.Fired += v.Fired
	}
	r.Unvisited = cv.classes(maxClasses)
	r.UnvisitedTransitions = cv.transitionClasses(maxClasses)
	return r
}

func variantRule(v string) model.Rule {
	name, _, _ := strings.Cut(v, " ")
	rl, _ := model.ParseRule(name)
	return rl
}

// String prints the report as `verify cover` does.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s\n", r.Config)
	fmt.Fprintf(&b, "  %d reachable states, %d transitions; %d states and %d transitions excluded (the executor cannot take them by design)\n",
		r.ModelStates, r.ModelTransitions, r.ExcludedStates, r.ExcludedTransitions)
	fmt.Fprintf(&b, "  visited %d states (%.1f%% of %d the executor can reach), %d transitions (%.1f%% of %d)\n",
		r.VisitedStates, r.StatePercent(), r.ModelStates-r.ExcludedStates,
		r.VisitedTransitions, r.TransitionPercent(), r.ModelTransitions-r.ExcludedTransitions)
	fmt.Fprintf(&b, "  %d runs, %d events projected; %d outside the model (conformance failures); %d left the configuration\n", r.Runs, r.Events, r.Outside, r.Left)
	for _, f := range r.Failures {
		f, _, _ = strings.Cut(f, "\n")
		fmt.Fprintf(&b, "  FAILURE %s\n", f)
	}
	for why, n := range r.LeftWhy {
		fmt.Fprintf(&b, "  left the configuration (%d runs): %s\n", n, why)
	}
	for _, x := range r.Exclusions {
		fmt.Fprintf(&b, "  excluded %-22s %6d states: %s\n", x.Name, x.States, x.Reason)
	}
	b.WriteString("\n  rule variant                                        visited / transitions   fired\n")
	for _, v := range r.Variants {
		can := v.Transitions - v.Excluded
		mark := " "
		if can > 0 && v.Visited == 0 {
			mark = "!"
		}
		fmt.Fprintf(&b, " %s %-50s %6d / %-6d %8d", mark, v.Variant, v.Visited, can, v.Fired)
		if v.Excluded > 0 {
			fmt.Fprintf(&b, "  (+%d excluded)", v.Excluded)
		}
		b.WriteByte('\n')
	}
	if len(r.Unvisited) > 0 {
		b.WriteString("\n  unvisited states, by class (largest first):\n")
		for _, c := range r.Unvisited {
			fmt.Fprintf(&b, "  %6d  %s\n          e.g. (depth %d) %s\n", c.States, c.Class, c.Depth, c.Example)
		}
	}
	if len(r.UnvisitedTransitions) > 0 {
		b.WriteString("\n  unvisited transitions, by rule variant and the class of the state they leave (largest first):\n")
		for _, c := range r.UnvisitedTransitions {
			fmt.Fprintf(&b, "  %6d  %s\n          e.g. from (depth %d) %s\n", c.States, c.Class, c.Depth, c.Example)
		}
	}
	return b.String()
}
