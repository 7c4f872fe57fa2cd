package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/execspec/execspec/checker"
)

// JSONSchema is the version of the --json output of every subcommand
// (docs/json-output.md): each prints objects with "schema" and "verdict"
// (holds, violated or unknown) first. A change that removes or renames a
// field, or changes its meaning, raises it; adding a field does not.
const JSONSchema = 1

// VerdictOf is the verdict that an exit code reports: 0 holds, 1
// violated, anything else unknown (3: a budget, a limit, an interrupt).
func VerdictOf(code int) string {
	switch code {
	case ExitHolds:
		return checker.Holds.String()
	case ExitViolated:
		return checker.Violated.String()
	}
	return checker.Unknown.String()
}

// jsonText makes the JSON that encoding/json wrote safe to print to a
// terminal without changing what it decodes to: every non-ASCII character
// that is not printable (bidirectional controls such as U+202E, zero-width
// characters, private-use ones), which encoding/json writes raw, becomes a
// \u escape. (encoding/json already escapes ASCII controls, U+2028 and
// U+2029.) Such characters appear only inside strings of b.
func jsonText(b []byte) string {
	var out strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r < utf8.RuneSelf || unicode.IsPrint(r) {
			out.Write(b[:n])
		} else if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&out, `\u%04x`, r)
		}
		b = b[n:]
	}
	return out.String()
}

// PrintJSON prints v as JSON and a newline to w, indented when indent is
// set, through jsonText: what every --json output prints.
func PrintJSON(w io.Writer, v any, indent bool) error {
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, jsonText(b))
	return err
}
