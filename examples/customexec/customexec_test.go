package customexec_test

import (
	"testing"

	"github.com/execspec/execspec/examples/customexec"
	"github.com/execspec/execspec/executor"
	"github.com/execspec/execspec/properties"
)

// TestSuite: the executor passes every property of the suite.
func TestSuite(t *testing.T) {
	properties.Run(t, func() executor.Executor { return customexec.New(2) })
}
