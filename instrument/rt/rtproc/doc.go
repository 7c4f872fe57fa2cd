// Package rtproc is what the controlled runtime (package rt) does to the
// Go process and its goroutines rather than to the program: the runtime
// goroutines that run controlled goroutines (Worker, Pool: reused, their
// stacks grown once), the process held on one P while runs are made
// (HoldOneProc, and GOMAXPROCS for the program), the collector's
// ballast (LessGC), and the watchdog that stops a test binary whose
// settle or run stands still in real time (Watch). Nothing here changes
// what a run chooses.
//
//	var pool rtproc.Pool
//	defer pool.Drain()
//	w := pool.Get(job)
//	if w == nil {
//		w = rtproc.Start(job)
//	}
//	w.Sem() <- struct{}{} // job.Run runs on w
package rtproc
