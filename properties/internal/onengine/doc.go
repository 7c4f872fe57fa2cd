// Package onengine holds what the suites share about running on the
// instrumented engine (instrument/rt): whether the process runs under it
// (Active: a test binary that `verify test` built and started, its
// EXECSPEC_* environment set), the bound on the yield points of one run
// there (Steps), and, for the property suite, whether its cases run there
// and what verify test asks of them (Use: Settings, Knobs), whether an
// executor's goroutines are controlled at all (ControlsGoroutines), the command that
// replays a failure (Replay), the outcome line verify test reads (Record)
// and the note beside a failfile that says how its schedule was drawn
// (Note, WriteNote, ReadNote).
//
// properties runs each case of a property as one controlled run there,
// properties/coverage each coverage run, properties/pool each case of a
// pool check; each decides by Active.
package onengine
