// Package cputime reads the CPU time the process has used, user and system
// together: the clock that benchmarks divide by to report throughput per
// CPU-second (a figure that does not grow with the machine's load), and
// that the properties suite's default fairness bound counts besides wall
// time.
//
//	c0 := cputime.Process()
//	work()
//	perCPUSecond := float64(n) / (cputime.Process() - c0).Seconds()
//
// On a system without getrusage it returns 0, and callers report wall-clock
// figures only.
package cputime
