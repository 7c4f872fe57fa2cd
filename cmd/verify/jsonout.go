package main

// jsonSchema is the version of the --json output of every subcommand
// (docs/json-output.md): each prints objects with "schema" and "verdict"
// (holds, violated or unknown) first. A change that removes or renames a
// field, or changes its meaning, raises it; adding a field does not.
const jsonSchema = 1
