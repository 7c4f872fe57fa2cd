//go:build !race

package lin_test

// linRuns is how many runs each executor gets in the stress tests.
const linRuns = 3
