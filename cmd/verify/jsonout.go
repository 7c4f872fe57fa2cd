package main

import "github.com/execspec/execspec/checker"

// jsonSchema is the version of the --json output of every subcommand
// (docs/json-output.md): each prints objects with "schema" and "verdict"
// (holds, violated or unknown) first. A change that removes or renames a
// field, or changes its meaning, raises it; adding a field does not.
const jsonSchema = 1

// verdictOf is the verdict that an exit code reports: 0 holds, 1
// violated, anything else unknown (3: a budget, a limit, an interrupt).
func verdictOf(code int) string {
	switch code {
	case exitHolds:
		return checker.Holds.String()
	case exitViolated:
		return checker.Violated.String()
	}
	return checker.Unknown.String()
}
