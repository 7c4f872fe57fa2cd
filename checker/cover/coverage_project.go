package cover

import (
	"fmt"
	"slices"

	"github.com/execspec/execspec/checker/conform"
	"github.com/execspec/execspec/model"
	"github.com/execspec/execspec/traces"
)

// Projection of a recorded run onto a closed model.
//
// The run's events go through a Conformance (the open model of the
// trace's header) and, in lockstep, through the closed model of the
// coverage space. After each event the projection looks for the rule
// instances of the closed model, from the current closed state, that lead
// to a state whose visible part — what a trace shows: each task's state
// and registration, every queue, every worker's task, the tasks spawned,
// the retry and slice counters — is the open model's state after the
// event. The closed model adds what a trace does not show (how many times
// each future has returned Pending, how many wakes its registration may
// still get), and follows the programs of the configuration.
//
//	event              closed rule instances it may stand for
//	spawn              SPAWN
//	take               POLL-LOCAL, GLOBAL-STEAL, WORKER-STEAL (by source)
//	register           POLL-PENDING
//	poll-end pending   TASK-SUSPEND, after POLL-PENDING when no register
//	                   event came first
//	poll-end ready     TASK-COMPLETE
//	wake               WAKE (also when it coalesces: the registration's
//	                   budget shrinks)
//	poll-end error     as poll-end panic: a failed task (v1.1)
//	anything else      nothing, unless it settles a decision the
//	                   Conformance deferred (time slice, retry)
//
// What format v1.1 adds:
//
//	priority           the policy priority projects when the trace is v1.1
//	                   (its spawns say the priorities) and its aging is
//	                   above 0: the closed model is the priority policy
//	                   with the header's aging; a spawn whose priority is
//	                   not the configuration's task's leaves the
//	                   configuration; the queued tasks' ages (the
//	                   Conformance's) are part of the visible state
//	future             nothing: the Conformance checks re-polls
//	stop               nothing (no rule; the run ends)
//	wake without task  nothing (a no-op waker: no rule)
//	spurious poll      (spurious-polls: 1) a busy re-queue is the WAKE it
//	                   stands for in the open model, an in-place re-poll a
//	                   poll; when no closed instance fits, the run leaves
//	                   the configuration, whose tasks are polled only when
//	                   woken
//
// At most three instances per event are tried (a deferred TASK-SUSPEND, the
// implied POLL-PENDING, the event's own rule), shortest first; among equal
// lengths the one whose last instance matches the event (its worker, its
// victim, the queue it pushed to) wins. Every state the projection reaches
// is a successor of a reachable state, so it is in the space.
//
// When no instance fits, the run has left the space, for one of two
// reasons, reported apart:
//   - the workload is not the configuration's (a task beyond Tasks, a
//     future that returns Pending more or fewer times than Pendings, a
//     registration woken more than Wakes times, or woken after the task
//     was taken again): the projection stops, and the run counts as "left
//     the configuration";
//   - otherwise the executor did something that conforms to the open model
//     but that no closed run does: a state outside the reachable set, which
//     is a conformance failure.
//
// A run that violates the open model is a conformance failure too.

// ProjectResult is what projecting one run found.
type ProjectResult struct {
	Events         int // events projected (up to where the projection stopped)
	NewStates      int // states no earlier run of the Coverage visited
	NewTransitions int
	// Err is a conformance failure: a *ConformanceError of the open model,
	// or a *OutsideError. Nil otherwise.
	Err error
	// Left says why the run left the configuration, if it did; the
	// projection stopped there.
	Left string
	// Conformance is the open model's report on the whole run (nil if the
	// header could not be checked).
	Conformance *conform.Report
}

// OutsideError is a conforming event after which no closed run of
// the configuration is in the state the run is in.
type OutsideError struct {
	Index int          // position of the event in the trace, from 0
	Event traces.Event // the event
	From  string       // the closed state before it (lanes)
	State string       // the open model's state after it (lanes)
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("event %d (seq %d): %s leads to a state outside the closed model's reachable states", e.Index+1, e.Event.Seq, conform.Describe(e.Event))
}

// headerFits reports why the trace header h does not describe the
// configuration of sp, or "".
func (sp *Space) headerFits(h traces.Header) error {
	pol, err := conform.HeaderPolicy(h)
	if err != nil {
		return err
	}
	cfg := pol.Config
	want := sp.cfg
	switch {
	case h.Workers != want.Workers:
		return fmt.Errorf("the trace has %d workers, the configuration %d", h.Workers, want.Workers)
	case pol.Priority:
		if err := priorityProjects(h); err != nil {
			return err
		}
		cfg.Policy, cfg.Aging = model.Priority, h.Config["aging"]
		if want.Policy == model.Priority && cfg.Aging != want.Aging {
			return fmt.Errorf("the trace's aging is %d, the configuration's %d", cfg.Aging, want.Aging)
		}
	case pol.LIFOSlot:
		return fmt.Errorf("the model has no LIFO slot (lifo-slot=1): its runs cannot be projected")
	case cfg.Policy != want.Policy:
		return fmt.Errorf("the trace's policy is %s, the configuration's %s", cfg.Policy, want.Policy)
	}
	if want.Policy == model.WorkSteal {
		if cfg.LocalCap != want.LocalCap || cfg.OwnerFIFO != want.OwnerFIFO || cfg.StealHalf != want.StealHalf || cfg.GlobalInterval != want.GlobalInterval {
			return fmt.Errorf("the trace's work-stealing parameters (local-cap=%d owner-fifo=%v steal-half=%v global-interval=%d) are not the configuration's (%d %v %v %d)",
				cfg.LocalCap, cfg.OwnerFIFO, cfg.StealHalf, cfg.GlobalInterval, want.LocalCap, want.OwnerFIFO, want.StealHalf, want.GlobalInterval)
		}
	}
	if want.Policy == model.TimeSlice && cfg.Slice != want.Slice {
		return fmt.Errorf("the trace's slice is %d, the configuration's %d", cfg.Slice, want.Slice)
	}
	if want.Policy == model.Retry && cfg.Retries != want.Retries {
		return fmt.Errorf("the trace's retries is %d, the configuration's %d", cfg.Retries, want.Retries)
	}
	return nil
}

// projector follows one run.
type projector struct {
	sp   *Space
	conf *conform.Conformance
	cur  *model.State
	id   int32 // the id of cur

	scratch *model.State

	// scratch for the search: per depth, the candidates
	lvl  [4][]covCand // lvl[0] holds the start
	path [3]int32     // the transitions step returns
}

// covCand is a run of one to three transitions of the space (edge ids)
// from the projector's state.
type covCand struct {
	path [3]int32
	n    int
	dst  int32
}

// newProjector returns a projector for a run with header h, reusing the
// scratch of old (nil for none).
func (sp *Space) newProjector(h traces.Header, old *projector) (*projector, error) {
	if err := sp.headerFits(h); err != nil {
		return nil, fmt.Errorf("coverage: %w", err)
	}
	conf, err := conform.New(h)
	if err != nil {
		return nil, err
	}
	// The model's invariants hold in every state of the space (the model
	// checker checks them), and every state the projection reaches is in
	// it: the open model's invariant checks would be redundant.
	conf.SkipInvariants()
	if old != nil {
		old.conf, old.id = conf, 0
		sp.unpack(0, old.cur)
		return old, nil
	}
	return &projector{sp: sp, conf: conf, cur: sp.m.Init(), scratch: sp.m.Init()}, nil
}

// visibleHash hashes the part of s that visible compares, the same for a
// closed state and an open one that shows it. It only speeds up the
// comparison (visible decides).
func (sp *Space) visibleHash(s *model.State) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	for i := range sp.cfg.Tasks {
		if i >= len(s.Task) {
			mix(0)
			continue
		}
		v := uint64(s.Task[i])
		if s.Task[i] != model.Notified && s.Polled[i] {
			v |= 8 // the registration, except of a NOTIFIED task (see visible)
		}
		if sp.cfg.Policy == model.Retry {
			v |= uint64(s.Tries[i]) << 4
		}
		mix(v)
	}
	mix(uint64(s.Spawned))
	for w, c := range s.Cur {
		mix(uint64(c))
		if sp.cfg.GlobalInterval > 0 {
			mix(uint64(s.Tick[w]))
		}
		if sp.cfg.Slice > 0 {
			mix(uint64(s.Slice[w]))
		}
	}
	mix(uint64(len(s.Global)))
	for _, t := range s.Global {
		mix(uint64(t))
	}
	for _, q := range s.Local {
		mix(uint64(len(q)) | 1<<32)
		for _, t := range q {
			mix(uint64(t))
		}
	}
	return h
}

// visible reports whether the closed state c shows what the open state o
// shows, and, if o has a task beyond c's, which.
func (sp *Space) visible(c, o *model.State) (ok bool, beyond int) {
	for i := len(c.Task); i < len(o.Task); i++ {
		if o.Task[i] != model.Idle {
			return false, i + 1
		}
	}
	if c.Spawned != o.Spawned {
		return false, 0
	}
	for i := range c.Task {
		ot, op, otr := model.Idle, false, uint8(0)
		if i < len(o.Task) {
			ot, op, otr = o.Task[i], o.Polled[i], o.Tries[i]
		}
		// A trace without register events shows a task woken during its
		// poll as NOTIFIED before the poll registered; the closed model
		// has it registered (its event source wakes only a registration).
		regOK := c.Polled[i] == op || (ot == model.Notified && !op)
		if c.Task[i] != ot || !regOK || (sp.cfg.Policy == model.Retry && c.Tries[i] != otr) {
			return false, 0
		}
	}
	if !slices.Equal(c.Cur, o.Cur) || !slices.Equal(c.Global, o.Global) {
		return false, 0
	}
	for w := range c.Local {
		if !slices.Equal(c.Local[w], o.Local[w]) {
			return false, 0
		}
	}
	if sp.cfg.GlobalInterval > 0 && !slices.Equal(c.Tick, o.Tick) {
		return false, 0
	}
	if sp.cfg.Slice > 0 && !slices.Equal(c.Slice, o.Slice) {
		return false, 0
	}
	return true, 0
}

// matches reports whether st is the rule instance event e reports.
func (p *projector) matches(st model.Step, e *traces.Event) bool {
	if st.Task != int(e.Task) {
		return false
	}
	switch e.Kind {
	case traces.KindSpawn:
		return st.Rule == model.SPAWN
	case traces.KindTake:
		return st.Rule == conform.TakeRule(e.Source) && st.Worker == int(e.Worker) &&
			(st.Rule != model.WORKER_STEAL || st.Victim == int(e.Victim))
	case traces.KindRegister:
		return st.Rule == model.POLL_PENDING && st.Worker == int(e.Worker)
	case traces.KindPollEnd:
		if e.Result == traces.ResultPending {
			return st.Rule == model.TASK_SUSPEND || st.Rule == model.POLL_PENDING
		}
		return st.Rule == model.TASK_COMPLETE
	case traces.KindWake:
		if st.Rule != model.WAKE {
			return false
		}
		want := model.Global
		if w := e.Queue.Worker(); w >= 0 {
			want = w
		} else if e.Worker >= 0 && p.sp.cfg.LocalCap > 0 {
			want = int(e.Worker) // pushed onto its own queue, or overflowed
		}
		return st.Dest == want || (st.Dest == model.Global && e.Outcome != traces.OutcomeScheduled)
	case traces.KindStep:
		return st.Rule == e.Rule
	}
	return true
}

// needsRule reports whether the event must stand for at least one rule
// instance even when the visible state does not change (a wake that
// coalesces uses up the registration's budget).
func needsRule(e *traces.Event) bool {
	switch e.Kind {
	case traces.KindWake:
		return e.Task != 0 // a wake without a task (v1.1) is no rule
	case traces.KindRegister, traces.KindStep:
		return true
	}
	return false
}

// step projects event e (already accepted by the Conformance). It returns
// the instances it stands for, or a reason the run left the
// configuration, or an outside error.
func (p *projector) step(idx int, e *traces.Event) (path []int32, left string, err error) {
	o := p.conf.State()
	sp := p.sp
	if c := &sp.cfg; e.Kind == traces.KindSpawn && c.Policy == model.Priority && e.Prioritized && int(e.Priority) != closedPriority(c, int(e.Task)) {
		// Priorities are not in the visible state: the spawn would fit,
		// and a take of the wrong task would look outside the model.
		return nil, fmt.Sprintf("t%d is spawned with priority %d: the configuration's t%d has priority %d", e.Task, e.Priority, e.Task, closedPriority(c, int(e.Task))), nil
	}
	oh := sp.visibleHash(o)
	if len(o.Task) > sp.cfg.Tasks || (oh == sp.vhash[p.id] && !needsRule(e)) {
		if ok, beyond := sp.visible(p.cur, o); ok && !needsRule(e) && p.agesFit(p.cur) {
			return nil, "", nil
		} else if beyond > 0 {
			return nil, fmt.Sprintf("task %d is beyond the configuration's %d tasks", beyond, sp.cfg.Tasks), nil
		}
	}
	// Breadth-first over at most three transitions of the space, read
	// from its edges (no state is built: each target is unpacked into one
	// scratch state to be compared).
	var best covCand
	found := false
	frontier := append(p.lvl[0][:0], covCand{dst: p.id})
	for d := 1; d <= len(p.lvl)-1 && !found; d++ {
		next := p.lvl[d][:0]
		for _, f := range frontier {
			for ed := sp.first[f.dst]; ed < sp.first[f.dst+1]; ed++ {
				c := f
				c.path[c.n] = ed
				c.n++
				c.dst = sp.edges[ed].dst
				next = append(next, c)
				if sp.vhash[c.dst] != oh {
					continue
				}
				sp.unpack(c.dst, p.scratch)
				if ok, _ := sp.visible(p.scratch, o); !ok || !p.agesFit(p.scratch) {
					continue
				}
				if p.matches(keyStep(sp.edges[ed].key), e) {
					best, found = c, true
					break
				}
				if best.n == 0 {
					best = c
				}
			}
			if found {
				break
			}
		}
		p.lvl[d] = next
		frontier = next
		if best.n > 0 {
			found = true
		}
	}
	if !found {
		if why := p.leftConfig(e); why != "" {
			return nil, why, nil
		}
		return nil, "", &OutsideError{Index: idx, Event: *e, From: p.cur.String(), State: p.conf.Lanes()}
	}
	sp.unpack(best.dst, p.cur)
	p.path = best.path
	return p.path[:best.n], "", nil
}

// leftConfig says how event e departs from the configuration's workload,
// or "" if it does not.
func (p *projector) leftConfig(e *traces.Event) string {
	c := &p.sp.cfg
	t := int(e.Task)
	if t > c.Tasks {
		return fmt.Sprintf("task %d is beyond the configuration's %d tasks", t, c.Tasks)
	}
	if t < 1 {
		return ""
	}
	i := t - 1
	switch e.Kind {
	case traces.KindWake:
		if p.cur.Wakes[i] == 0 {
			return fmt.Sprintf("t%d is woken with no wake left of its registration (wakes=%d per registration, cancelled when the task is taken again)", t, c.Wakes)
		}
	case traces.KindRegister:
		if !c.Endless && int(p.cur.Pend[i]) >= c.Pendings {
			return fmt.Sprintf("t%d registers a waker after %d Pending results (pendings=%d)", t, p.cur.Pend[i], c.Pendings)
		}
	case traces.KindPollEnd:
		switch {
		case e.Result == traces.ResultPending && !c.Endless && int(p.cur.Pend[i]) >= c.Pendings && !p.cur.Polled[i]:
			return fmt.Sprintf("t%d returns Pending after %d Pending results (pendings=%d)", t, p.cur.Pend[i], c.Pendings)
		case e.Result == traces.ResultReady && (c.Endless || int(p.cur.Pend[i]) < c.Pendings):
			return fmt.Sprintf("t%d returns Ready after %d Pending results (pendings=%d)", t, p.cur.Pend[i], c.Pendings)
		case (e.Result == traces.ResultPanic || e.Result == traces.ResultError) && c.Policy != model.Retry:
			return fmt.Sprintf("t%d fails: the configuration's futures do not fail", t)
		}
	case traces.KindSpawn:
		if e.Queue.Worker() >= 0 {
			return fmt.Sprintf("t%d is spawned onto a local queue: the configuration's tasks are spawned from outside", t)
		}
	}
	if p.conf.SpuriousPolls() {
		if e.Kind == traces.KindRequeue || e.Kind == traces.KindPollBegin {
			return fmt.Sprintf("t%d is polled again without a wake (a spurious poll): the configuration's tasks are polled only when woken", t)
		}
	}
	return ""
}

// closedPriority is task t's priority in the closed configuration c (the
// model's: Priorities[t-1], or t-1).
func closedPriority(c *model.Config, t int) int {
	if t-1 < len(c.Priorities) {
		return c.Priorities[t-1]
	}
	return t - 1
}

// priorityProjects says why the runs of a priority executor whose trace
// header is h cannot be projected, or nil.
func priorityProjects(h traces.Header) error {
	switch {
	case h.Minor < 1:
		return fmt.Errorf("a priority executor's v1.0 trace does not say the tasks' priorities: its runs cannot be projected (format v1.1 records them)")
	case h.Config["aging"] == 0:
		return fmt.Errorf("a priority executor without aging (aging 0): the closed model's priority policy ages, its runs cannot be projected")
	}
	return nil
}

// agesFit reports whether the closed state c's queued tasks have the ages
// the Conformance counted (priority policy; always true otherwise).
func (p *projector) agesFit(c *model.State) bool {
	if p.sp.cfg.Policy != model.Priority {
		return true
	}
	for _, t := range c.Global {
		a, ok := p.conf.Age(int(t))
		if !ok {
			return true // a v1.0 trace: no ages counted
		}
		if c.Age[t-1] != a {
			return false
		}
	}
	return true
}

// ClosedConfig returns the closed configuration of the policy a trace
// header h describes, with the workload (Tasks, Pendings, Endless, Wakes)
// of w: the configuration onto which that executor's runs of that
// workload project. It fails for a header whose runs cannot be projected
// (the priority policy, a LIFO slot).
func ClosedConfig(h traces.Header, w model.Config) (model.Config, error) {
	pol, err := conform.HeaderPolicy(h)
	cfg := pol.Config
	if err != nil {
		return cfg, fmt.Errorf("coverage: header: %w", err)
	}
	switch {
	case pol.Priority:
		if err := priorityProjects(h); err != nil {
			return cfg, fmt.Errorf("coverage: %w", err)
		}
		cfg.Policy, cfg.Aging, cfg.Priorities = model.Priority, h.Config["aging"], w.Priorities
	case pol.LIFOSlot:
		return cfg, fmt.Errorf("coverage: the model has no LIFO slot (lifo-slot=1): its runs cannot be projected")
	}
	cfg.Tasks, cfg.Pendings, cfg.Endless, cfg.Wakes = w.Tasks, w.Pendings, w.Endless, w.Wakes
	if cfg.Policy == model.Retry && cfg.Retries == 0 {
		cfg.Retries = 1
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("coverage: %w", err)
	}
	return cfg.Normalized(), nil
}
