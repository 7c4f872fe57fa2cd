package pool

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/execspec/execspec/properties/stress"
)

// Check runs the pool properties on workloads drawn by rapid, each on a
// fresh pool from newPool, and fails t with the findings of the first
// failing case, shrunk.
//
// Races are not deterministic: a workload that failed once may pass when
// run again. So once a case has failed, every later case (rapid's
// shrinking and its final replay) is run up to Config.Retries times and
// fails if any run fails; that keeps the shrinking on the failure. After a
// hang (whose goroutines cannot be stopped) the remaining cases are
// skipped, so that the hanging case is the one reported.
func Check(t *testing.T, newPool func() Pool, cfg Config) {
	t.Helper()
	cfg = cfg.withDefaults()
	var failed atomic.Bool
	var mu sync.Mutex
	var hungW *Workload // the case that hung, and its message
	var hungMsg string
	rapid.Check(t, func(rt *rapid.T) {
		w := Draw(rt, cfg)
		if msg := checkCase(rt, newPool, w, cfg, &failed, &mu, &hungW, &hungMsg); msg != "" {
			// One call site for every failure: rapid compares where a
			// failure comes from when it replays the case.
			rt.Fatal(msg)
		}
	})
}

// checkCase runs one case of Check and returns its failure, or "".
func checkCase(rt *rapid.T, newPool func() Pool, w Workload, cfg Config, failed *atomic.Bool, mu *sync.Mutex, hungW **Workload, hungMsg *string) string {
	mu.Lock()
	hw, hm := *hungW, *hungMsg
	mu.Unlock()
	if hw != nil {
		// A hang leaves goroutines stuck in the pool; run no more cases.
		// Rapid's final replay of the hanging case gets its message again,
		// so that it is the case reported.
		if reflect.DeepEqual(w, *hw) {
			return hm
		}
		return ""
	}
	tries := 1
	if failed.Load() {
		tries = cfg.Retries
	}
	for try := 1; try <= tries; try++ {
		if err := RunWorkload(newPool, w, cfg); err != nil {
			failed.Store(true)
			msg := fmt.Sprintf("%s: %v", w, err)
			if isHang(err) {
				mu.Lock()
				*hungW, *hungMsg = &w, msg
				mu.Unlock()
			}
			if try > 1 {
				rt.Logf("failed on run %d of the same workload", try)
			}
			return msg
		}
	}
	return ""
}

// Run is Check without a test: it tries cfg.Cases workloads generated from
// cfg.Seed and returns the findings of the first failing one, or nil.
func Run(newPool func() Pool, cfg Config) error {
	cfg = cfg.withDefaults()
	r := rand.New(rand.NewPCG(cfg.Seed, 0xda3e39cb94b95bdb))
	for i := range cfg.Cases {
		w := Generate(r, cfg)
		if err := RunWorkload(newPool, w, cfg); err != nil {
			return fmt.Errorf("pool: case %d (seed %d), %s: %w", i+1, cfg.Seed, w, err)
		}
	}
	return nil
}

func isHang(err error) bool {
	var f *Finding
	return errors.As(err, &f) && f.Property == NoHang
}

// Task states, kept per task id.
const (
	unsubmitted int32 = iota
	accepted
	refused
	panicked // Submit panicked: accepted or not, nobody knows
)

// panicked records a panic of the pool (in newPool, Submit or Close).
func (tr *tracker) panicked(where string, v any) {
	tr.panicMu.Lock()
	defer tr.panicMu.Unlock()
	tr.panics = append(tr.panics, fmt.Sprintf("%s panicked: %v", where, v))
}

// tracker observes one case: every task counts its runs and the tasks
// running at once; submitters record what Submit answered.
type tracker struct {
	w        Workload
	cfg      Config
	p        Pool
	verdict  []atomic.Int32 // unsubmitted, accepted, refused
	submitEr []error        // the refusals, by task (written before verdict)
	runs     []atomic.Int32
	finished []atomic.Bool
	children []int // first child id of each top-level task

	running    atomic.Int32
	maxRunning atomic.Int32
	inSubmit   []atomic.Int32 // per submitter: task id + 1 while in Submit
	inClose    atomic.Bool
	closed     atomic.Bool // Close has returned
	lateStarts atomic.Int32

	panicMu sync.Mutex
	panics  []string
}

func newTracker(w Workload, cfg Config) *tracker {
	n := w.total()
	tr := &tracker{
		w: w, cfg: cfg,
		verdict:  make([]atomic.Int32, n),
		submitEr: make([]error, n),
		runs:     make([]atomic.Int32, n),
		finished: make([]atomic.Bool, n),
		children: make([]int, len(w.Tasks)),
		inSubmit: make([]atomic.Int32, w.Submitters+1),
	}
	next := len(w.Tasks)
	for i, t := range w.Tasks {
		tr.children[i] = next
		next += t.Children
	}
	return tr
}

// task returns the function submitted for task id; top is the index of
// its top-level task (its own id when it is top-level).
func (tr *tracker) task(id int, t Task, top int) func() {
	return func() {
		tr.runs[id].Add(1)
		if tr.closed.Load() {
			tr.lateStarts.Add(1)
		}
		now := tr.running.Add(1)
		for {
			m := tr.maxRunning.Load()
			if now <= m || tr.maxRunning.CompareAndSwap(m, now) {
				break
			}
		}
		// Deferred, so that a task that ends in runtime.Goexit is
		// finished too.
		defer func() {
			tr.running.Add(-1)
			tr.finished[id].Store(true)
		}()
		if id == top {
			for c := range t.Children {
				cid := tr.children[top] + c
				tr.submit(len(tr.inSubmit)-1, cid, tr.task(cid, Task{Work: t.Work, Amount: t.Amount / 2}, cid))
			}
		}
		t.do()
	}
}

// submit submits task id and records the answer; slot names the caller
// (a submitter, or the last slot for nested submits).
func (tr *tracker) submit(slot, id int, f func()) {
	tr.inSubmit[slot].Store(int32(id + 1))
	defer func() {
		if r := recover(); r != nil {
			tr.inSubmit[slot].Store(0)
			tr.verdict[id].Store(panicked)
			tr.panicked(fmt.Sprintf("Submit of task %d", id), r)
		}
	}()
	err := tr.p.Submit(f)
	tr.inSubmit[slot].Store(0)
	if err != nil {
		tr.submitEr[id] = err
		tr.verdict[id].Store(refused)
	} else {
		tr.verdict[id].Store(accepted)
	}
}

// RunWorkload runs one workload on a fresh pool and returns its findings
// joined (each a *Finding), or nil. A hang leaks the goroutines stuck in
// the pool: they cannot be stopped from outside.
func RunWorkload(newPool func() Pool, w Workload, cfg Config) error {
	cfg = cfg.withDefaults()
	tr := newTracker(w, cfg)
	done := make(chan error, 1)
	go func() { done <- tr.run(newPool) }()
	timer := time.NewTimer(cfg.Timeout)
	defer timer.Stop()
	var closeErr error
	select {
	case closeErr = <-done:
	case <-timer.C:
		return tr.hang()
	}
	return tr.verify(closeErr)
}

func (tr *tracker) run(newPool func() Pool) (closeErr error) {
	defer func() {
		if r := recover(); r != nil {
			tr.panicked("newPool", r)
			closeErr = errPoolPanicked
		}
	}()
	tr.p = newPool()
	w := tr.w
	parties := w.Submitters
	if w.CloseEarly {
		parties++
	}
	b := stress.NewBarrier(parties, time.Second)
	var wg sync.WaitGroup
	closeDone := make(chan error, 1)
	closePool := func() {
		tr.inClose.Store(true)
		defer func() {
			if r := recover(); r != nil {
				tr.panicked("Close", r)
				tr.closed.Store(true)
				tr.inClose.Store(false)
				closeDone <- errPoolPanicked
			}
		}()
		err := tr.p.Close()
		tr.closed.Store(true)
		tr.inClose.Store(false)
		closeDone <- err
	}
	var cpus []int
	if tr.cfg.Pin {
		cpus, _ = stress.CPUs()
	}
	for s := range w.Submitters {
		wg.Add(1)
		submit := func() {
			defer wg.Done()
			b.Wait()
			for id := s; id < len(w.Tasks); id += w.Submitters {
				tr.submit(s, id, tr.task(id, w.Tasks[id], id))
			}
		}
		if len(cpus) > 0 {
			// Pinned to distinct CPUs (round robin), where permitted; a
			// submitter that cannot be pinned still runs.
			stress.Go(cpus[s%len(cpus)], submit)
		} else {
			go submit()
		}
	}
	if w.CloseEarly {
		go func() {
			b.Wait()
			closePool()
		}()
		wg.Wait()
	} else {
		wg.Wait()
		closePool()
	}
	return <-closeDone
}

// errPoolPanicked stands for the result of a Close (or a newPool) that
// panicked; the panic itself is a finding.
var errPoolPanicked = errors.New("the pool panicked")

// verify checks the properties once Close has returned closeErr.
func (tr *tracker) verify(closeErr error) error {
	var errs []error
	tr.panicMu.Lock()
	panics := slices.Clone(tr.panics)
	tr.panicMu.Unlock()
	if len(panics) > 0 {
		errs = append(errs, finding(NoPanic, "%s", strings.Join(panics, "; ")))
	}
	if errors.Is(closeErr, errPoolPanicked) && tr.p == nil {
		return errors.Join(errs...)
	}
	n := len(tr.runs)
	// What had finished when Close returned; give late tasks a grace period.
	unfinished := tr.unfinishedAccepted()
	if len(unfinished) > 0 {
		deadline := time.Now().Add(tr.cfg.Grace)
		for time.Now().Before(deadline) && len(tr.unfinishedAccepted()) > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	after := tr.unfinishedAccepted()
	if closeErr == nil {
		// Tasks that finished during the grace period: Close did not wait.
		late := slices.DeleteFunc(slices.Clone(unfinished), func(id int) bool { return slices.Contains(after, id) })
		if len(late) > 0 {
			errs = append(errs, finding(ShutdownWaits, "Close returned nil before %d accepted tasks had finished (%s); they finished after it returned", len(late), ids(late)))
		}
		if len(after) > 0 {
			errs = append(errs, finding(NoneLost, "%d accepted tasks never finished (%s), and Close returned nil", len(after), ids(after)))
		}
	}
	var twice, refusedRan []int
	for id := range n {
		r := tr.runs[id].Load()
		if r > 1 {
			twice = append(twice, id)
		}
		if tr.verdict[id].Load() == refused && r > 0 {
			refusedRan = append(refusedRan, id)
		}
	}
	if len(twice) > 0 {
		errs = append(errs, finding(ExactlyOnce, "%d tasks ran more than once (%s: %d times)", len(twice), ids(twice), tr.runs[twice[0]].Load()))
	}
	if len(refusedRan) > 0 {
		errs = append(errs, finding(RefusedNotRun, "%d tasks ran although Submit refused them (%s: %v)", len(refusedRan), ids(refusedRan), tr.submitEr[refusedRan[0]]))
	}
	if !tr.w.CloseEarly && !tr.cfg.MayRefuse {
		// Without a race with Close, a healthy pool accepts every task.
		var refusedIDs []int
		for id := range n {
			if tr.verdict[id].Load() == refused && id < len(tr.w.Tasks) {
				refusedIDs = append(refusedIDs, id)
			}
		}
		if len(refusedIDs) > 0 {
			errs = append(errs, finding(SubmitSucceeds, "Submit refused %d tasks before Close was called (%s: %v)", len(refusedIDs), ids(refusedIDs), tr.submitEr[refusedIDs[0]]))
		}
	}
	if c := tr.cfg.Capacity; c > 0 {
		if m := tr.maxRunning.Load(); int(m) > c {
			errs = append(errs, finding(CapacityBound, "%d tasks ran at once; the capacity is %d", m, c))
		}
	}
	return errors.Join(errs...)
}

// unfinishedAccepted lists the accepted tasks that have not finished.
func (tr *tracker) unfinishedAccepted() []int {
	var out []int
	for id := range tr.runs {
		if tr.verdict[id].Load() == accepted && !tr.finished[id].Load() {
			out = append(out, id)
		}
	}
	return out
}

// hang describes where a case that timed out is stuck.
func (tr *tracker) hang() error {
	var where []string
	for s := range tr.inSubmit {
		if id := tr.inSubmit[s].Load(); id > 0 {
			who := fmt.Sprintf("submitter %d", s)
			if s == len(tr.inSubmit)-1 {
				who = "a task submitting a nested task"
			}
			where = append(where, fmt.Sprintf("%s in Submit of task %d", who, id-1))
		}
	}
	if tr.inClose.Load() {
		where = append(where, "Close has not returned")
	}
	var notRun, running []int
	for id := range tr.runs {
		switch {
		case tr.runs[id].Load() == 0 && tr.verdict[id].Load() != refused:
			notRun = append(notRun, id)
		case tr.runs[id].Load() > 0 && !tr.finished[id].Load():
			running = append(running, id)
		}
	}
	msg := fmt.Sprintf("no progress after %v", tr.cfg.Timeout)
	if len(where) > 0 {
		msg += ": " + strings.Join(where, "; ")
	}
	if len(notRun) > 0 {
		msg += fmt.Sprintf("; %d tasks never ran (%s)", len(notRun), ids(notRun))
	}
	if len(running) > 0 {
		msg += fmt.Sprintf("; %d tasks still running (%s)", len(running), ids(running))
	}
	return finding(NoHang, "%s", msg)
}

// ids formats task ids, at most 10 of them.
func ids(list []int) string {
	var b strings.Builder
	b.WriteString("task")
	if len(list) > 1 {
		b.WriteString("s")
	}
	for i, id := range list {
		if i == 10 {
			fmt.Fprintf(&b, " … and %d more", len(list)-10)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d", id)
	}
	return b.String()
}
