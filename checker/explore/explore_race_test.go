//go:build race

package explore

// raceOn: the race detector slows every atomic operation of the parallel
// explorer, so the largest configurations run sequentially only.
const raceOn = true
