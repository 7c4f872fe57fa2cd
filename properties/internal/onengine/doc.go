// Package onengine holds what the suites share about running on the
// instrumented engine (instrument/rt): whether the process runs under it
// (Active: a test binary that `verify test` built and started, its
// EXECSPEC_* environment set) and the bound on the yield points of one
// run there (Steps).
//
// properties runs each case of a property as one controlled run there,
// properties/coverage each coverage run, properties/pool each case of a
// pool check; each decides by Active.
package onengine
