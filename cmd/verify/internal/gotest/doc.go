// Package gotest is verify test and verify cover --no-hook: go test on
// code rewritten at build time (instrument), so that its goroutines,
// channels, locks and atomics run under a controlled scheduler
// (instrument/rt).
//
// Test rewrites the packages asked for, runs their tests with go test
// -overlay under the strategy, reads go test's output with bounded memory
// (test_output.go) and reports each failure with the command that replays
// its schedule. CoverNoHook builds the test binary of
// properties/testdata/hookless with the executors rewritten and runs
// verify cover's runs in it.
package gotest
