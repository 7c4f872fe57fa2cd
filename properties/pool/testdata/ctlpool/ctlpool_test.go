package ctlpool

import (
	"testing"
	"time"

	"github.com/execspec/execspec/properties/pool"
)

// These tests mean something only under the controlled runtime (the
// suite's TestControlledMode runs them so); run freely they are skipped.

func check(t *testing.T, bugs func(*Pool), cfg pool.Config) {
	if !pool.UnderControl() {
		t.Skip("runs under the controlled runtime (properties/pool's TestControlledMode)")
	}
	cfg.Space = pool.Space{Capacity: [2]int{1, 3}}
	cfg.MaxTasks = 24
	cfg.MaxSubmitters = 3
	pool.CheckOptions(t, func(o pool.Options) pool.Pool {
		p := New(o.Capacity)
		if bugs != nil {
			bugs(p)
		}
		return &pool.Adapter{SubmitFunc: p.Submit, ResizeFunc: p.Resize, CloseFunc: p.Close}
	}, cfg)
}

func TestCorrect(t *testing.T) {
	check(t, nil, pool.Config{Panics: pool.PanicsRecovered, Goexit: true})
}

func TestGrowNoWake(t *testing.T) {
	check(t, func(p *Pool) { p.GrowNoWake = true }, pool.Config{})
}

// A Resize that never returns: the scheduler's hang is described with
// the controller still in Resize (the suite must not wait for it).
func TestResizeWaits(t *testing.T) {
	check(t, func(p *Pool) { p.ResizeWaits = true }, pool.Config{})
}

func TestGoexitLeaks(t *testing.T) {
	check(t, func(p *Pool) { p.GoexitLeaks = true }, pool.Config{Goexit: true})
}

func TestPanicDoubleDone(t *testing.T) {
	check(t, func(p *Pool) { p.PanicDoubleDone = true }, pool.Config{Panics: pool.PanicsRecovered})
}

// The Goexit leak beside a purge ticker: still a deadlock (the scheduler
// sees past housekeeping), not a run to the step budget.
func TestGoexitLeaksPurge(t *testing.T) {
	check(t, func(p *Pool) { p.GoexitLeaks, p.Purge = true, time.Second }, pool.Config{Goexit: true})
}

// Two defects at once: each is its own finding, with its own schedule.
func TestTwoBugs(t *testing.T) {
	check(t, func(p *Pool) { p.GrowNoWake, p.PanicDoubleDone = true, true }, pool.Config{Panics: pool.PanicsRecovered})
}

// checkWorkers checks a Workers pool (idle workers stopped by a purge)
// with the given defects, acknowledging known.
func checkWorkers(t *testing.T, bugs func(*Workers), known ...string) {
	if !pool.UnderControl() {
		t.Skip("runs under the controlled runtime (properties/pool's TestControlledMode)")
	}
	cfg := pool.Config{
		Space:         pool.Space{Capacity: [2]int{1, 3}, IdleTimeout: [2]time.Duration{60 * time.Millisecond, 120 * time.Millisecond}},
		MaxTasks:      24,
		MaxSubmitters: 3,
		Known:         known,
	}
	pool.CheckOptions(t, func(o pool.Options) pool.Pool {
		p := NewWorkers(o.Capacity, o.IdleTimeout)
		if bugs != nil {
			bugs(p)
		}
		return &pool.Adapter{SubmitFunc: p.Submit, CloseFunc: p.Close}
	}, cfg)
}

func TestWorkersCorrect(t *testing.T) { checkWorkers(t, nil) }

// A worker the purge stops signals without the lock: a progress
// finding after the idle expiry.
func TestExpiryNoWake(t *testing.T) {
	checkWorkers(t, func(p *Workers) { p.ExpiryNoWake = true })
}

// The same, acknowledged: no finding.
func TestExpiryNoWakeKnown(t *testing.T) {
	checkWorkers(t, func(p *Workers) { p.ExpiryNoWake = true }, pool.Progress+"/"+pool.IdleExpiry)
}

// The idle expiry's lost wakeup acknowledged, and a second lost wakeup
// (a worker back from its task does not signal): the second is still a
// finding, with its own trigger.
func TestExpiryKnownEndNoWake(t *testing.T) {
	checkWorkers(t, func(p *Workers) { p.ExpiryNoWake, p.EndNoWake = true, true }, pool.Progress+"/"+pool.IdleExpiry)
}
