//go:build race

package conform_test

// raceExt: the race detector is on (it slows the checker tenfold).
const raceExt = true
