// Package chaselev is a bounded Chase-Lev work-stealing deque, in a correct
// form and in a form with a known race, both able to record every operation
// as an interval on one logical clock so that a history can be checked for
// linearizability.
//
// Vocabulary: the owner is the one goroutine that pushes and pops at the
// bottom (the owner end, LIFO); thieves steal from the top (the steal end).
// An operation's call and return ticks come from one atomic Clock shared by
// every goroutine of a run, never from wall time.
//
// The racy form (NewRacy) takes the last element at the owner end without
// the compare-and-swap against thieves: an owner and a thief can then both
// take it. It exists so that stress tests can show that they find the race
// (an element taken twice, a history that is not linearizable) while the
// correct form always passes.
//
// Example, recording one owner and one thief:
//
//	var clk chaselev.Clock
//	d := chaselev.New(64)
//	owner, thief := chaselev.NewLog(&clk, 1), chaselev.NewLog(&clk, 2)
//	owner.Push(d, 7)
//	go func() { thief.Steal(d) }()
//	owner.Pop(d)
//	// owner.Ops() and thief.Ops() are the history.
package chaselev
