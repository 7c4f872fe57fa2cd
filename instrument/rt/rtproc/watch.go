package rtproc

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// The settle watchdog. Settling (synctest.Wait) returns once every other
// goroutine of the bubble is durably blocked. A goroutine that is not
// controlled and is blocked in a way testing/synctest does not count as
// durable — waiting for a lock of package sync that a parked controlled
// goroutine holds (without the overlay of sync, --std-sync), a system
// call, a loop that never blocks — keeps it from returning, and the run
// would wait until the test's timeout, ten minutes under verify test. A
// watchdog outside the bubble sees a settle that has not returned for
// SettleLimit of real time and stops the test binary with the goroutines
// in the way and what to do about them.
//
// The same watchdog sees a run whose steps stand still for SettleLimit of
// real time while nothing settles: the goroutine holding control loops
// without reaching a yield point (`for {}`, a spin on a plain variable, a
// long computation), or waits in code that is not instrumented for
// something that never comes. It stops the binary as well, with the
// stacks of the bubble's goroutines that are not durably blocked.

// EnvSettleLimit overrides SettleLimit (a duration, "2s").
const EnvSettleLimit = "EXECSPEC_SETTLE_LIMIT"

// SettleLimit is how long the watchdog lets one settle go on, or a run's
// steps stand still, in real time.
var SettleLimit = time.Minute

func init() {
	if d, err := time.ParseDuration(os.Getenv(EnvSettleLimit)); err == nil && d > 0 {
		SettleLimit = d
	}
}

// Progress is what the watchdog sees of the run in progress: which run
// (compared, not read), its steps so far, the goroutine holding control.
type Progress struct {
	Run    any
	Step   int64
	Holder int
}

// Watch starts the watchdog, from outside any bubble: settles counts the
// settles begun and ended (odd while one is under way), and progress
// reports the run in progress, ok false when there is none or its holder
// waits for real in a phase of the scheduler (not a loop). The returned
// function stops the watchdog and waits for its goroutine to end, so that
// the next run does not see the process's goroutines change while it
// counts them. The process is on one P as long as it watches
// (HoldOneProc).
func Watch(settles *atomic.Uint64, progress func() (p Progress, ok bool)) (stop func()) {
	release := HoldOneProc()
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(min(time.Second, SettleLimit/4))
		defer tick.Stop()
		last, since := settles.Load(), time.Now()
		var seen Progress
		watching := false
		stepSince := time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			n := settles.Load()
			p, ok := progress()
			switch {
			case n%2 == 1 || !ok:
				watching = false // a settle, no run, or the holder's real wait: not a loop
			case !watching || p.Run != seen.Run || p.Step != seen.Step:
				seen, watching, stepSince = p, true, time.Now()
			case time.Since(stepSince) >= SettleLimit:
				panic(stepStuck(p.Holder, seen.Step, time.Since(stepSince)))
			}
			if n != last || n%2 == 0 {
				last, since = n, time.Now()
				continue
			}
			if time.Since(since) >= SettleLimit {
				panic(settleStuck(time.Since(since)))
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		release()
	}
}

// settleStuck is the watchdog's report: the goroutines of a bubble that
// are not durably blocked, but for the one settling.
func settleStuck(d time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "execspec/rt: the scheduler waited %v of real time for goroutines that are not controlled (started by code that was not rewritten) to block, and they have not: ", d.Round(time.Second))
	b.WriteString("one waits for a lock of package sync that a controlled goroutine holds (testing/synctest does not count that wait as blocked; with verify test --std-sync the lock is controlled), or is in a system call, or never blocks. ")
	b.WriteString("Instrument the package that starts it (--instrument). Goroutines of the bubble not durably blocked:\n")
	b.WriteString(busyStacks())
	return b.String()
}

// stepStuck is the watchdog's report of a run whose steps stood still:
// goroutine id held control after step steps.
func stepStuck(id int, steps int64, d time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "execspec/rt: controlled goroutine %d held control for %v of real time without reaching a yield point (after step %d): ", id, d.Round(time.Second), steps)
	b.WriteString("it loops without a channel operation, lock, atomic or call into instrumented code (for {}, a spin on a plain variable), computes for that long, or waits in code that is not instrumented (a system call, a goroutine that is not controlled). ")
	b.WriteString("A loop needs a yield point (runtime.Gosched, an atomic load); EXECSPEC_SETTLE_LIMIT sets the limit. Goroutines of the bubble not durably blocked:\n")
	b.WriteString(busyStacks())
	return b.String()
}

// busyStacks gives the stacks (13 lines at the most, five goroutines) of
// the goroutines of a bubble that are not durably blocked, but for the
// one settling.
func busyStacks() string {
	var b strings.Builder
	buf := make([]byte, 4<<20)
	shown := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(head, "synctest bubble") || strings.Contains(head, "durable") || strings.Contains(g, "rt.settle(") {
			continue
		}
		if shown == 5 {
			b.WriteString("(more not shown)\n")
			break
		}
		lines := strings.Split(g, "\n")
		b.WriteString(strings.Join(lines[:min(len(lines), 13)], "\n") + "\n")
		shown++
	}
	return b.String()
}
