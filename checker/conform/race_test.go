//go:build race

package conform

// raceEnabled: the race detector is on (it slows the checker tenfold).
const raceEnabled = true
