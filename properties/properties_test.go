package properties_test

import (
	"testing"

	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
)

// TestBuiltins runs the whole suite on every built-in executor. Raise the
// number of cases with -properties.checks=100000 (or PROPERTIES_CHECKS) for
// a long run.
func TestBuiltins(t *testing.T) {
	for _, name := range executor.BuiltinNames() {
		newExecutor, _ := executor.Builtin(name)
		t.Run(name, func(t *testing.T) {
			var opts []properties.Option
			if raceEnabled {
				opts = append(opts, properties.Checks(40))
			}
			properties.Run(t, newExecutor, opts...)
		})
	}
}
