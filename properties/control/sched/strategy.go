package sched

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/execspec/execspec/executor/point"
)

// Point names the yield point a goroutine reached: an executor.Point of
// the built-in executors, or point.None under instrumentation.
type Point = point.Point

// Errors of controlled runs.
var (
	// ErrBudget is wrapped by the error of a run that reached its step
	// budget.
	ErrBudget = errors.New("control: step budget exceeded")
	// ErrDiverged is wrapped by the error of a replay that did not follow
	// its schedule or whose checksum differs.
	ErrDiverged = errors.New("control: replay diverged")
	// ErrStrategy is wrapped when a Strategy returned an impossible choice.
	ErrStrategy = errors.New("control: bad choice")
)

// Decision is what a Strategy is asked at a yield point where more than one
// goroutine can run. It is valid only during the Choose call.
type Decision struct {
	N               int   // decisions so far in this run
	Step            int   // yield points so far in this run (this one included)
	Current         int   // the goroutine that reached the yield point (or returned)
	Point           Point // where Current is
	CurrentRunnable bool  // Current may continue; it is then Runnable[0]
	// Runnable are the goroutines that may run next: Current first when it
	// may continue, then the others in the order they were started. The
	// choice is an index into it, so choosing 0 never preempts: a schedule
	// of zeros is the one with the fewest switches, which is where rapid
	// shrinks to.
	Runnable []int
}

// Strategy chooses which goroutine runs next. Choose returns an index into
// d.Runnable; an index out of range stops the run with an error wrapping
// ErrStrategy (or the error of an Err() error method, if the Strategy has
// one). A Strategy may also have Begin() and End(steps int) methods, called
// by Run on its own goroutine before and after each run.
//
// Choose is called by the goroutine that gives control away, while no
// controlled goroutine runs, so a Strategy needs no lock; it must not call
// back into the Controller.
type Strategy interface {
	Choose(d Decision) int
}

// Choice is one recorded decision: Index out of Of runnable goroutines.
// Preempt says that the goroutine that reached the point could have
// continued and another was chosen (a context switch that the program did
// not force).
type Choice struct {
	Index   int
	Of      int
	Preempt bool
}

// random chooses uniformly from a PCG stream.
type random struct{ r *rand.Rand }

// Random returns a Strategy that chooses uniformly at random among the
// runnable goroutines, from a PCG stream seeded with seed. The stream goes on
// from one run to the next, so each run of a Controller gets a different
// schedule; save a run's Schedule to replay it.
func Random(seed uint64) Strategy {
	return &random{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

func (s *random) Choose(d Decision) int { return s.r.IntN(len(d.Runnable)) }

// Replay is a Strategy that makes the choices of a recorded Schedule, and
// notices when the run does not match them.
type Replay struct {
	s    Schedule
	next int
	err  error
}

// NewReplay returns a Strategy that replays s from its first choice.
func NewReplay(s Schedule) *Replay { return &Replay{s: s} }

// Begin restarts the schedule; Run calls it.
func (r *Replay) Begin() { r.next, r.err = 0, nil }

// Choose returns the next recorded choice, or -1 (stopping the run) if the
// run asks for a choice the schedule does not have, or has a different
// number of runnable goroutines than recorded.
func (r *Replay) Choose(d Decision) int {
	if r.next >= len(r.s.Choices) {
		r.err = fmt.Errorf("%w: decision %d at step %d is past the schedule's %d choices", ErrDiverged, d.N, d.Step, len(r.s.Choices))
		return -1
	}
	c := r.s.Choices[r.next]
	if c.Of != 0 && c.Of != len(d.Runnable) {
		r.err = fmt.Errorf("%w: at decision %d (step %d) %d goroutines can run; the schedule recorded %d", ErrDiverged, d.N, d.Step, len(d.Runnable), c.Of)
		return -1
	}
	if c.Index >= len(d.Runnable) {
		r.err = fmt.Errorf("%w: decision %d chooses %d of %d", ErrDiverged, d.N, c.Index, len(d.Runnable))
		return -1
	}
	r.next++
	return c.Index
}

// Version returns the format version of the schedule replayed (1 or
// Version): a run replaying a version 1 schedule chooses as version 1
// runs did (see Schedule.Version).
func (r *Replay) Version() int { return r.s.version() }

// Used returns how many of the schedule's choices the current run made.
func (r *Replay) Used() int { return r.next }

// Err says why the replay stopped the run, or nil.
func (r *Replay) Err() error { return r.err }

// Check says whether the run just made (got, its schedule) followed the
// replayed schedule to its end and reproduced its steps and checksum: nil
// if so, else an error wrapping ErrDiverged that says where it parted
// (Err's reason when the replay stopped the run).
func (r *Replay) Check(got Schedule) error {
	if r.err != nil {
		return r.err
	}
	if r.next != len(r.s.Choices) {
		return fmt.Errorf("%w: the run ended after %d of the schedule's %d choices", ErrDiverged, r.next, len(r.s.Choices))
	}
	if got.Steps != r.s.Steps || got.Checksum != r.s.Checksum {
		return fmt.Errorf("%w: %d steps, checksum %016x; the schedule recorded %d steps, checksum %016x", ErrDiverged, got.Steps, got.Checksum, r.s.Steps, r.s.Checksum)
	}
	return nil
}
