//go:build !race

package conform_test

const raceExt = false
