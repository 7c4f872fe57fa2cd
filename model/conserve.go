package model

import "strconv"

// Work conservation. The rules say what a worker may take; they do not
// make an idle worker take. An executor conserves work when no worker
// sleeps while a task waits that it could take: Takeable says, of a state
// and a worker, which take the rules enable for it if it is idle, so that
// a checker of real runs can name the worker, the queue and the task of a
// worker left asleep (properties: work-conservation).

// Takeable returns the take the rules enable for worker w in s if w is
// idle (POLL-LOCAL from its local queue, or from the global queue when its
// global check is due; GLOBAL-STEAL; WORKER-STEAL from the first victim
// with work, under the policies that steal), and whether there is one. A
// worker that is polling or in the middle of a steal has none: it is not
// idle.
func (m *Model) Takeable(s *State, w int) (Step, bool) {
	if w < 0 || w >= len(s.Cur) || s.Cur[w] != 0 || s.Steal[w] != 0 {
		return Step{}, false
	}
	var found Step
	ok := false
	m.nextWorker(s, w, func(st Step) bool {
		if m.checkTake(s, st) == nil {
			found, ok = st, true
			return false
		}
		return true
	})
	return found, ok
}

// TakeQueue names the queue a take st is from: "global", or "local:N".
func (st Step) TakeQueue() string {
	switch {
	case st.Rule == GLOBAL_STEAL:
		return "global"
	case st.Rule == WORKER_STEAL:
		return "local:" + strconv.Itoa(st.Victim)
	}
	return "local:" + strconv.Itoa(st.Worker)
}
