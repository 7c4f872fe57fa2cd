package rt

// The knobs and counters of the scheduler's fast paths, for the tests of
// package rt_test: they run programs that use rtstd's sync types, and
// rtstd imports rt.
var (
	AlwaysSettle       = &alwaysSettle
	SkippedSettles     = &skippedSettles
	AlwaysLaunch       = &alwaysLaunch
	WaitsOnCoordinator = &waitsOnCoordinator
	HolderPhases       = &holderPhases
	OnlyTimePhases     = &onlyTimePhases
)

// The mode of early timers and the report's early line, for the tests of
// the test's own timers (testtimers_test.go): they use rtstd's.
var (
	TimersReadable = &testTimersReadable
	EarlyLegacy    = &earlyLegacy
	LastEarly      = &lastEarly
)

// Every choice of the package's tests checks its candidates (ready.go).
func init() { checkReady = true }
