package rt

import (
	"sync/atomic"

	"github.com/execspec/execspec/instrument/rt/rtproc"
)

// settles counts the settles begun and ended: odd while one is under way,
// for the settle watchdog (rtproc.Watch), which stops the test binary when
// a settle or a run's steps stand still for rtproc.SettleLimit of real
// time.
var settles atomic.Uint64

// watchSettles starts the watchdog for as long as the runs of one
// synctest.Test go on, and returns what stops it.
func watchSettles() (stop func()) {
	return rtproc.Watch(&settles, func() (rtproc.Progress, bool) {
		r := active.Load()
		if r == nil || r.holding.Load() {
			return rtproc.Progress{}, false
		}
		p := rtproc.Progress{Run: r, Step: r.prog.Load(), Holder: -1}
		if g := r.cur.Load(); g != nil {
			p.Holder = g.id
		}
		return p, true
	})
}
