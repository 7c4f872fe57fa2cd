package executor

import "sort"

var builtins = map[string]func() Executor{
	"fifo":      func() Executor { return NewFIFO() },
	"wakeable":  func() Executor { return NewWakeable(2) },
	"worksteal": func() Executor { return NewWorkSteal(WorkStealConfig{}) },
	"priority":  func() Executor { return NewPriority(PriorityConfig{}) },
	"timeslice": func() Executor { return NewTimeslice(TimesliceConfig{}) },
	"retry":     func() Executor { return NewRetry(RetryConfig{}) },
	"monitored": func() Executor { return NewMonitored(NewWorkSteal(WorkStealConfig{})) },
}

// Builtin returns a constructor of the built-in executor with the given
// name, with default sizes (two workers for wakeable and worksteal, one for
// the others), and whether there is one. Each call of the constructor
// returns a fresh executor.
func Builtin(name string) (func() Executor, bool) {
	f, ok := builtins[name]
	return f, ok
}

// BuiltinNames returns the names Builtin knows, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
