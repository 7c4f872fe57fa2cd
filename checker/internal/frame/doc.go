// Package frame is what the two streaming trace checkers (checker/conform
// and checker/partial) keep around their rules, written once: the count of
// events given, the last Seq, the first violation (Error), the ring of the
// last events before it, the findings that are no violation (Finding:
// panics, warnings), the form of their messages (Describe, Rule), and the
// opening lines of their reports.
//
// A checker holds a Frame and steps it so:
//
//	func (c *Checker) Step(e traces.Event) error {
//		idx, err := c.fr.Begin() // the violation so far, or Step after Finish
//		if err != nil {
//			return err
//		}
//		if err := c.check(idx, &e); err != nil { // the checker's rules; c.fr.FailAt records a violation
//			return err
//		}
//		c.fr.Keep(idx, &e) // kept for the context of a later violation
//		return nil
//	}
//
// Package conform exports Error and Finding (aliases of this package's
// types) and MaxTask; nothing here is API of its own.
package frame
