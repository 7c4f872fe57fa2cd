package cli

import (
	"fmt"
	"unicode/utf8"

	"github.com/execspec/execspec/traces"
)

// Term is s as it may be printed on a terminal: escaped by
// traces.Printable, and cut to a bounded length.
func Term(s string) string { return ClipLine(traces.Printable(s)) }

// MaxLineBytes bounds one printed line built from a trace's data (a state
// with millions of queued tasks, a long detail).
const MaxLineBytes = 2000

// ClipLine cuts s to MaxLineBytes, at a rune boundary, saying how much was
// left out.
func ClipLine(s string) string {
	if len(s) <= MaxLineBytes {
		return s
	}
	cut := MaxLineBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// ShortEvent is the text form of e with a long detail cut, for listings
// on a terminal (the trace file keeps it whole): its text passes through
// Term.
func ShortEvent(e traces.Event) string {
	const maxDetail = 60
	if r := []rune(e.Detail); len(r) > maxDetail {
		e.Detail = string(r[:maxDetail]) + "…"
	}
	return Term(traces.FormatEvent(e))
}
