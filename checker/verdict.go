package checker

// Verdict is the three-valued outcome of a check.
type Verdict uint8

// Verdicts. The zero value is Unknown: a check that ran out of budget, or was
// interrupted, never claims more than it showed.
const (
	Unknown  Verdict = iota // the budget was spent (states, memory, time) or the run was stopped
	Holds                   // the property holds on everything explored, and everything was explored
	Violated                // a counterexample was found
)

func (v Verdict) String() string {
	switch v {
	case Holds:
		return "holds"
	case Violated:
		return "violated"
	default:
		return "unknown"
	}
}
