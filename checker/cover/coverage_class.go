package cover

import (
	"sort"
	"strings"

	"github.com/execspec/execspec/model"
)

// Classes of unvisited states. A state's class is the list of the features
// below that it has, so that a person can read what the runs missed ("a task
// NOTIFIED, every local queue full") rather than a list of states.
//
//	feature                              holds when
//	a task NOTIFIED                      some task is NOTIFIED
//	a registration armed during a poll   some RUNNING task registered its waker
//	                                     and its poll has not returned
//	a task WAITING                       some task is WAITING
//	every local queue full               each worker's local queue is at capacity
//	a local queue full                   some, not all
//	a task in a local queue              some local queue is not empty (and none full)
//	every worker polling                 no worker is idle
//	global queue holds n                 n ≥ 2 tasks in the global queue
//	every task DONE                      the final state
func (sp *Space) classOf(s *model.State) string {
	var f []string
	has := func(st model.TaskState) bool {
		for _, t := range s.Task {
			if t == st {
				return true
			}
		}
		return false
	}
	if has(model.Notified) {
		f = append(f, "a task NOTIFIED")
	}
	for i, t := range s.Task {
		if t == model.Running && s.Polled[i] {
			f = append(f, "a registration armed during a poll")
			break
		}
	}
	if has(model.Waiting) {
		f = append(f, "a task WAITING")
	}
	if c := sp.cfg.LocalCap; c > 0 {
		full, some := 0, 0
		for _, q := range s.Local {
			if len(q) >= c {
				full++
			}
			if len(q) > 0 {
				some++
			}
		}
		switch {
		case full == len(s.Local):
			f = append(f, "every local queue full")
		case full > 0:
			f = append(f, "a local queue full")
		case some > 0:
			f = append(f, "a task in a local queue")
		}
	}
	busy := 0
	for _, c := range s.Cur {
		if c != 0 {
			busy++
		}
	}
	if busy == len(s.Cur) {
		f = append(f, "every worker polling")
	}
	if n := len(s.Global); n >= 2 {
		f = append(f, "global queue holds "+itoa(n))
	}
	if s.AllDone() {
		f = append(f, "every task DONE")
	}
	if len(f) == 0 {
		return "no task notified, registered or waiting; no local work"
	}
	return strings.Join(f, ", ")
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// classes groups the unvisited states the executor can reach (excluded
// ones aside) by class, largest class first; max bounds the list (0: all).
func (cv *Coverage) classes(max int) []UnvisitedClass {
	sp := cv.sp
	var t classTally
	s := sp.m.Init()
	for i := range cv.state {
		if cv.state[i] || sp.excluded[i] {
			continue
		}
		sp.unpack(int32(i), s)
		t.add(sp.classOf(s), s, int(sp.depth[i]))
	}
	return t.largest(max)
}

// transitionClasses groups the unvisited transitions the executor can take
// (excluded ones aside) by their rule variant and the class of the state
// they leave, largest group first; max bounds the list (0: all). Each
// group's example is a shallowest state it leaves from.
func (cv *Coverage) transitionClasses(max int) []UnvisitedClass {
	sp := cv.sp
	var t classTally
	s := sp.m.Init()
	for i := 0; i+1 < len(sp.first); i++ {
		lo, hi := sp.first[i], sp.first[i+1]
		var class string
		for e := lo; e < hi; e++ {
			if cv.edge[e] || sp.edges[e].excl {
				continue
			}
			if class == "" {
				sp.unpack(int32(i), s)
				class = sp.classOf(s)
			}
			t.add(sp.variants[sp.edges[e].variant]+" from: "+class, s, int(sp.depth[i]))
		}
	}
	return t.largest(max)
}

// classTally groups states (or the transitions leaving them) by class: how
// many, and a shallowest example of each.
type classTally struct {
	idx map[string]int
	out []UnvisitedClass
}

// add counts one more in class c: state s, at depth d.
func (t *classTally) add(c string, s *model.State, d int) {
	k, ok := t.idx[c]
	if !ok {
		if t.idx == nil {
			t.idx = map[string]int{}
		}
		k = len(t.out)
		t.idx[c] = k
		t.out = append(t.out, UnvisitedClass{Class: c, Example: oneLine(s), Depth: d})
	}
	t.out[k].States++
	if d < t.out[k].Depth {
		t.out[k].Depth = d
		t.out[k].Example = oneLine(s)
	}
}

// largest returns the classes, largest first (ties in the order first
// seen), at most max of them (0: all).
func (t *classTally) largest(max int) []UnvisitedClass {
	out := t.out
	sort.SliceStable(out, func(a, b int) bool { return out[a].States > out[b].States })
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out
}

// oneLine prints a state on one line.
func oneLine(s *model.State) string { return strings.ReplaceAll(s.String(), "\n", " | ") }
