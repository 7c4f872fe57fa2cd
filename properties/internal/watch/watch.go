package watch

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"time"
)

// End is how a watched case ended.
type End uint8

// How a watched case ends.
const (
	Done      End = iota + 1 // done was closed
	Violation                // viol was closed
	Hang                     // no progress for idle (twice that while another goroutine could run), or the deadline passed
)

// Case watches a case that runs on its own goroutines until it is done
// (done closed), shows a violation (viol closed) or hangs: progress (the
// case's logical clock) did not move for idle, or the deadline passed.
// late is told, at each tick of the watcher that came late, how late it
// came (the process was kept from running).
//
// Idle time counts only while the watcher itself runs on time: when the
// whole process is starved of CPU (a loaded machine, the race detector),
// a late tick restarts the window instead of reporting a hang. And a
// window that ends while some other goroutine is running or waiting to
// run (othersCanRun) gets a second one before the hang is reported: the
// executor's worker may be running on a thread the operating system has
// stopped while the watcher's runs (a correct queue executor was
// reported hung so at a load of 24 on 2 cores). A hang with every
// goroutine blocked, a lost wake, is reported at the first.
func Case(done, viol <-chan struct{}, progress func() uint64, late func(time.Duration), idle time.Duration, deadline time.Time) End {
	tick := time.NewTicker(idle / 8)
	defer tick.Stop()
	last, lastChange, lastTick := progress(), time.Now(), time.Now()
	second := false
	for {
		select {
		case <-done:
			return Done
		case <-viol:
			return Violation
		case now := <-tick.C:
			gap := now.Sub(lastTick)
			isLate := gap > idle/4
			if isLate {
				late(gap - idle/8)
			}
			lastTick = now
			if c := progress(); c != last || isLate {
				second = second && c == last
				last, lastChange = c, now
			} else if now.After(deadline) || now.Sub(lastChange) > idle && (second || !othersCanRun()) {
				return Hang
			} else if now.Sub(lastChange) > idle {
				second, lastChange = true, now
			}
		}
	}
}

// Stacks returns every goroutine's stack, cut to at most max bytes
// (whole goroutines, and a line saying how much was left out).
func Stacks(max int) string {
	buf := make([]byte, max+1)
	n := runtime.Stack(buf, true)
	if n <= max {
		return string(buf[:n])
	}
	s := string(buf[:max])
	if i := strings.LastIndex(s, "\n\ngoroutine "); i > 0 {
		s = s[:i+1]
	}
	return s + "\n… (more goroutines, not shown)\n"
}

// othersCanRun reports whether a goroutine other than the caller is
// running or waiting to run, as the runtime counts them: the executor may
// then still move, however late.
func othersCanRun() bool {
	samples := []metrics.Sample{{Name: "/sched/goroutines/running:goroutines"}, {Name: "/sched/goroutines/runnable:goroutines"}}
	metrics.Read(samples)
	var n uint64
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			n += s.Value.Uint64()
		}
	}
	return n > 1
}
