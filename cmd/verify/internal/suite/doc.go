// Package suite is verify run and verify cover: the property suite and
// the coverage runs (properties) on a built-in executor.
//
// Run checks each property under controlled interleavings (or
// uncontrolled ones) and, for a failure, writes the trace and its
// timeline with the first departure from the rules marked as the root
// cause (run_trace.go). Cover projects every run onto the model and
// reports the states and transitions reached, as text, JSON or an HTML
// page (cover_html.go); --no-hook hands the runs to gotest.CoverNoHook.
package suite
