package shrink

import "time"

// Greedy makes w smaller until the deadline: of candidates(w), the
// boldest first, the first that shows the defect becomes w, and the
// search starts again from it; it stops when no candidate shows it.
func Greedy[W any](w W, candidates func(W) []W, shows func(W) bool, deadline time.Time) W {
	for progress := true; progress && time.Now().Before(deadline); {
		progress = false
		for _, c := range candidates(w) {
			if !time.Now().Before(deadline) {
				break
			}
			if shows(c) {
				w, progress = c, true
				break
			}
		}
	}
	return w
}

// Cuts lists the spans [start, end) of a sequence of n elements to drop
// in turn: each half, then each quarter, eighth, ..., each element, so
// that a case whose defect needs most of its elements still shrinks in a
// few steps per halving, not one element per step. A sequence of 16 or
// fewer goes from halves straight to single elements, as the steps
// between would be about as many runs.
func Cuts(n int) [][2]int {
	var out [][2]int
	for chunk := max(n/2, 1); chunk >= 1; chunk /= 2 {
		if n <= 16 && chunk > 1 && chunk < n/2 {
			continue
		}
		for start := 0; start < n; start += chunk {
			out = append(out, [2]int{start, min(start+chunk, n)})
		}
		if chunk == 1 {
			break
		}
	}
	return out
}
