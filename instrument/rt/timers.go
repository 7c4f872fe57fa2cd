package rt

import "time"

// Early time. With Config.EarlyTimers the schedule may choose a goroutine
// waiting for a timer while others could run; virtual time then passes
// until a timer fires, and the goroutines that could have run were slow
// meanwhile. That time is real to the program (a timeout expires, a
// deadline passes) but it says nothing of the program's own speed: a
// check that measures how long something took, in virtual time, must not
// count it against the code under test (a pool was not slow to start a
// task because the schedule held its worker back while time passed).
// The run keeps the sum: EarlyTime reads it.

// markEarly notes that the schedule chose to let time pass while another
// goroutine could run: the coordinator's next external phase is early.
func (r *run) markEarly() { r.earlyFrom = time.Now() }

// endEarly adds the virtual time that passed since markEarly, if the
// external phase that just ended was early.
func (r *run) endEarly() {
	if !r.earlyFrom.IsZero() {
		r.early.Add(int64(time.Since(r.earlyFrom)))
		r.earlyFrom = time.Time{}
	}
}

// EarlyTime returns how much virtual time the run in progress has let
// pass while a controlled goroutine could run (Config.EarlyTimers: a
// timer fired early, as if the others were slow); 0 outside a run or
// without EarlyTimers. It never decreases during a run, and never grows
// faster than the virtual clock: time.Since(t0) less the EarlyTime gained
// since t0 is the time that passed only once every controlled goroutine
// was blocked (or a goroutine was outside the scheduler), a clock that
// neither runs backwards nor counts the schedule's holding back. Safe
// for concurrent use.
func EarlyTime() time.Duration {
	r := active.Load()
	if r == nil {
		return 0
	}
	return time.Duration(r.early.Load())
}
