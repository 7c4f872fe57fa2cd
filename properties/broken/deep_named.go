package broken

import (
	"fmt"
	"strings"

	"github.com/execspec/execspec/executor"
)

// DeepNamed returns the constructor of the deep-state executor that name
// names, as `verify cover --executor` spells it: "deep" for the correct
// base (with c's workers and local capacity), "deep/NAME" for the mutant
// NAME of DeepCatalogue. ok is false when name is not "deep" or "deep/...".
func DeepNamed(name string, c DeepConfig) (mk func() executor.Executor, ok bool, err error) {
	rest, ok := strings.CutPrefix(name, "deep")
	if !ok {
		return nil, false, nil
	}
	if rest == "" {
		return func() executor.Executor { return NewDeep(c) }, true, nil
	}
	for _, m := range DeepCatalogue() {
		if "/"+m.Name == rest {
			return m.New, true, nil
		}
	}
	return nil, true, fmt.Errorf("no deep-state mutant %q", strings.TrimPrefix(rest, "/"))
}
