//go:build !race

package checker

const raceOn = false
