//go:build race

package properties_test

// raceEnabled: the race detector slows the executors about tenfold, so the
// tests that run the whole suite draw fewer cases under it.
const raceEnabled = true
