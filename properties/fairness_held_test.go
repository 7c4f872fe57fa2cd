package properties

import (
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties/internal/fair"
	"github.com/execspec/execspec/traces"
)

// boundedStub is what fairSim's executor states: W workers and a fairness
// bound in polls (bound < 0: none). It runs nothing; fairSim polls.
type boundedStub struct{ workers, bound int }

func (boundedStub) Spawn(executor.Future) (executor.Handle, error) { return nil, executor.ErrClosed }
func (boundedStub) Wait() error                                    { return nil }
func (boundedStub) Close() error                                   { return nil }
func (s boundedStub) Describe() traces.Header                      { return traces.Header{Workers: s.workers} }
func (s boundedStub) FairnessBound(int) int                        { return s.bound }

// fairSim plays an order of polls and wakes on the probes of a case, as an
// executor on real threads can make them happen: which worker polls which
// task, and when a task is woken. The probes see only that, as they do from
// outside any executor; the fairness check judges what they saw.
type fairSim struct {
	t *testing.T
	r *caseRun
}

// newFairSim is a black-box case of tasks tasks (each able to return
// Pending polls times) on an executor with the given workers that states
// bound (< 0: nothing, the default bound).
func newFairSim(t *testing.T, tasks, polls, workers, bound int) *fairSim {
	return newFairSimOf(t, tasks, polls, boundedStub{workers, bound})
}

// newFairSimOf is newFairSim on an executor that states what ex states.
func newFairSimOf(t *testing.T, tasks, polls int, ex executor.Executor) *fairSim {
	w := &Workload{}
	for range tasks {
		w.Tasks = append(w.Tasks, TaskSpec{Steps: make([]Step, polls)})
	}
	r := newCase(w)
	r.setFairness(ex, tasks, &Config{})
	return &fairSim{t, r}
}

// poll is a whole poll of task on worker.
func (s *fairSim) poll(task, worker int) {
	s.r.probes[task-1].Poll(executor.NewContext(executor.Waker{}, worker))
}

// polls makes worker poll the tasks others in turn, n polls in all.
func (s *fairSim) polls(worker, n int, others ...int) {
	for i := range n {
		s.poll(others[i%len(others)], worker)
	}
}

// readyWhileBusy is the opening of most cases: worker 0 polls task 2,
// worker 1 polls task 3, and then task 1 is woken, ready while both
// workers are busy.
func (s *fairSim) readyWhileBusy() {
	s.poll(2, 0)
	s.poll(3, 1)
	s.wake(1)
}

// wake is a wake of task that the executor has accepted (the waker
// returned): from here the task is ready, as far as anyone outside can
// tell.
func (s *fairSim) wake(task int) { s.r.probes[task-1].markReady(s.r.tick()) }

// longAgo moves task's readiness a second back by both clocks, as if the
// polls since had taken that long.
func (s *fairSim) longAgo(task int) {
	p := s.r.probes[task-1]
	p.ready.Since = time.Now().Add(-2 * fair.DefaultStarveTime)
	p.ready.CPU -= 2 * fair.DefaultStarveTime
}

func (s *fairSim) failed() string {
	if len(s.r.viols) == 0 {
		return ""
	}
	return s.r.viols[0].detail
}

// TestFairnessHeldByStoppedWorker: a ready task held by a worker that the
// operating system stopped — in its local queue, between its take and its
// poll, between the end of its poll and the re-queue of a wake that came
// then — while another worker polls its own tasks does not count against
// the executor, however many polls the other makes. Each case is a fair
// run seen on real threads; summing every worker's polls of others, as the
// check once did, failed the first three.
func TestFairnessHeldByStoppedWorker(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		tasks, workers, bound int
		play                  func(s *fairSim)
	}{
		{
			// The work-stealing base, 2 workers, bound 300: worker 0 has
			// task 1 in its local queue and is stopped; worker 1 keeps
			// polling its own tasks (it steals only when its queue is
			// empty); worker 0 comes back, polls the task ahead of task 1,
			// then task 1. Seen in CI: 328 polls of others.
			name: "local queue of a stopped worker", tasks: 3, workers: 2, bound: 300,
			play: func(s *fairSim) {
				s.readyWhileBusy()
				s.polls(1, 328, 3, 2)
				s.poll(2, 0)
				s.longAgo(1)
				s.poll(1, 0)
			},
		},
		{
			// The wakeable FIFO, 2 workers, bound n-1 (seed
			// 7876761563530172561): worker 0 ends its poll of task 5 and is
			// stopped before it finishes the poll in the executor; task 4's
			// poll on worker 1 wakes task 5, which makes it NOTIFIED, not
			// queued; worker 1 polls the ring of tasks 2 and 3 4,096 times;
			// worker 0 comes back, re-queues task 5, polls task 3 (queued
			// just before) and then task 5.
			name: "woken between its poll's end and its re-queue", tasks: 5, workers: 2, bound: 4,
			play: func(s *fairSim) {
				s.poll(5, 0)
				s.poll(4, 1)
				s.wake(5)
				s.polls(1, 4096, 2, 3)
				s.poll(3, 0)
				s.longAgo(5)
				s.poll(5, 0)
			},
		},
		{
			// Worker 0 ended one poll after the task became ready and was
			// then stopped holding it; worker 1 emptied its own queue and
			// stole the task.
			name: "stolen from a stopped worker", tasks: 3, workers: 2, bound: 300,
			play: func(s *fairSim) {
				s.readyWhileBusy()
				s.poll(2, 0)
				s.polls(1, 400, 3)
				s.longAgo(1)
				s.poll(1, 1)
			},
		},
		{
			// Still waiting, by the default bound: worker 0 is stopped
			// holding the task while worker 1 polls others past the limit.
			name: "still held, default bound", tasks: 3, workers: 2, bound: -1,
			play: func(s *fairSim) {
				s.readyWhileBusy()
				s.poll(2, 0)
				s.polls(1, 3*fair.StarveLimit, 3)
				s.longAgo(1)
				s.r.checkStarving()
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFairSim(t, tc.tasks, 5000, tc.workers, tc.bound)
			tc.play(s)
			if d := s.failed(); d != "" {
				t.Fatalf("a fair run failed fairness: %s", d)
			}
			if f := s.r.fair.MaxDelay.Load(); tc.bound >= 0 && f <= int64(tc.bound) {
				t.Fatalf("the case did not wait past the bound (%d polls of others): it tests nothing", f)
			}
		})
	}
}

// TestFairnessPassedOverByEveryWorker: a ready task that every worker
// passes over, polling others past the bound, fails, whether it is then
// polled or still waits, with one worker or two.
func TestFairnessPassedOverByEveryWorker(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		tasks, workers, bound int
		play                  func(s *fairSim)
		want                  string
	}{
		{
			name: "one worker, polled late", tasks: 3, workers: 1, bound: 2,
			play: func(s *fairSim) {
				s.poll(1, 0)
				s.wake(1)
				s.polls(0, 7, 2, 3)
				s.poll(1, 0)
			},
			want: "task 1 waited 7 polls of other tasks between becoming ready and its poll; the executor states a bound of 2",
		},
		{
			name: "two workers, polled late", tasks: 5, workers: 2, bound: 4,
			play: func(s *fairSim) {
				s.poll(1, 0)
				s.poll(2, 1)
				s.wake(1)
				for range 10 {
					s.polls(0, 1, 2)
					s.polls(1, 1, 3)
				}
				s.longAgo(1)
				s.poll(1, 1)
			},
			want: "task 1 waited 20 polls of other tasks between becoming ready and its poll, and each of the 2 workers ended at least 10 of them meanwhile",
		},
		{
			name: "two workers, still waiting, default bound", tasks: 3, workers: 2, bound: -1,
			play: func(s *fairSim) {
				s.poll(1, 0)
				s.wake(1)
				s.polls(0, fair.StarveLimit+1, 2)
				s.polls(1, fair.StarveLimit+1, 3)
				s.longAgo(1)
				s.r.checkStarving()
			},
			want: "task 1 (ready for 2s, since poll 1, polled 1 times): not polled within the default bound",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFairSim(t, tc.tasks, 2*fair.StarveLimit, tc.workers, tc.bound)
			tc.play(s)
			if d := s.failed(); !strings.Contains(d, tc.want) {
				t.Fatalf("got %q, want a failure with %q", d, tc.want)
			}
		})
	}
}

// waitStub states W workers and a fairness bound in time.
type waitStub struct {
	boundedStub
	wait time.Duration
}

func (s waitStub) FairnessBound(int) int          { return -1 }
func (s waitStub) FairnessWait(int) time.Duration { return s.wait }

// TestFairnessWaitDiscountsLateness: a bound in time counts only the time
// the process ran. A ready task that waited a second, past the 530 ms a
// 10 ms bound allows, fails; the same wait while the case's watcher found
// the process kept from running for 900 ms of it (its ticks late) does
// not.
func TestFairnessWaitDiscountsLateness(t *testing.T) {
	for _, late := range []time.Duration{0, 900 * time.Millisecond} {
		s := newFairSimOf(t, 3, 10, waitStub{boundedStub{workers: 2}, 10 * time.Millisecond})
		r := s.r
		s.readyWhileBusy()
		r.probes[0].ready.Since = time.Now().Add(-time.Second)
		r.fair.Late.Add(int64(late))
		s.poll(2, 0)
		s.poll(3, 1)
		s.poll(1, 0)
		switch d := s.failed(); {
		case late == 0 && !strings.Contains(d, "states a bound of 10ms"):
			t.Errorf("a task that waited 1s against a bound of 10ms passed (%q)", d)
		case late > 0 && d != "":
			t.Errorf("a wait of 1s, 900ms of it with the process kept from running, failed: %s", d)
		}
	}
}
