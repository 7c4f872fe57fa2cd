//go:build race

package lin_test

// linRuns is how many runs each executor gets in the stress tests: fewer
// under the race detector, which slows every recorded event.
const linRuns = 1
