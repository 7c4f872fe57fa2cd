package properties

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/execspec/execspec/properties/coverage"
)

// Option sets one thing of the Config of Run. Options compose: each sets
// only its own field, in any order; the same field set twice to different
// values, or two settings that contradict each other (a fairness bound in
// polls and one in time), make Run fail at once with an error naming both,
// never silently keep one. WithConfig sets every field its Config sets (the
// non-zero ones) under the same rule.
type Option func(*Config)

// setField records that an option set field to value (its printed form)
// and applies it, or records a conflict with an earlier setting.
func (c *Config) setField(field string, value any, apply func()) {
	v := fmt.Sprint(value)
	if c.set == nil {
		c.set = map[string]string{}
	}
	if old, ok := c.set[field]; ok && old != v {
		c.conflicts = append(c.conflicts, fmt.Sprintf("%s set to %s and to %s", field, old, v))
		return
	}
	c.set[field] = v
	apply()
}

// check returns the conflicts of c's options and settings, or nil.
func (c *Config) check() error {
	errs := append([]string(nil), c.conflicts...)
	if c.FairnessBound > 0 && c.FairnessWait > 0 {
		errs = append(errs, fmt.Sprintf("a fairness bound in polls (%d) and one in time (%v): an executor is held to one", c.FairnessBound, c.FairnessWait))
	}
	if c.PCTDepth > 0 && c.Uncontrolled {
		errs = append(errs, fmt.Sprintf("PCT schedules (depth %d) and a black-box run: PCT needs the controller", c.PCTDepth))
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New("properties: conflicting options: " + strings.Join(errs, "; "))
}

// Checks sets the number of cases per property (Config.Checks).
func Checks(n int) Option {
	return func(c *Config) { c.setField("Checks", n, func() { c.Checks = n }) }
}

// Seed sets rapid's base seed (Config.Seed).
func Seed(seed uint64) Option {
	return func(c *Config) { c.setField("Seed", seed, func() { c.Seed = seed }) }
}

// Only runs just the named properties; Only options add up.
func Only(names ...string) Option { return func(c *Config) { c.Only = append(c.Only, names...) } }

// Skip leaves out the named properties; Skip options add up.
func Skip(names ...string) Option { return func(c *Config) { c.Skip = append(c.Skip, names...) } }

// BlackBox runs an executor.Controllable executor as a black box too, on
// the Go scheduler (Config.Uncontrolled).
func BlackBox() Option {
	return func(c *Config) { c.setField("Uncontrolled", true, func() { c.Uncontrolled = true }) }
}

// NoHook leaves the Scheduler hook of an executor.Controllable unused
// (Config.NoHook): under the instrumented engine its instrumented code is
// controlled instead.
func NoHook() Option {
	return func(c *Config) { c.setField("NoHook", true, func() { c.NoHook = true }) }
}

// FairnessBound holds an executor that states no bound of its own to n
// polls of other tasks between a task becoming ready and its poll
// (Config.FairnessBound; the check allows 2 per worker more, for takes it
// cannot see).
func FairnessBound(n int) Option {
	return func(c *Config) { c.setField("FairnessBound", n, func() { c.FairnessBound = n }) }
}

// FairnessWait holds an executor that states no bound of its own to d of
// waiting by the clock (Config.FairnessWait; black-box cases only; the
// check allows 3d + 500 ms, for the clock's and the operating system's
// share).
func FairnessWait(d time.Duration) Option {
	return func(c *Config) { c.setField("FairnessWait", d, func() { c.FairnessWait = d }) }
}

// NoSpuriousPolls holds the executor to polling a task only after its
// spawn or a wake of its own (Config.NoSpuriousPolls).
func NoSpuriousPolls() Option {
	return func(c *Config) { c.setField("NoSpuriousPolls", true, func() { c.NoSpuriousPolls = true }) }
}

// CoverageGoal adds the spec-coverage check with a goal of pct percent of
// the states the executor can reach (Config.Coverage.Goal), keeping the
// rest of a Coverage set by WithConfig.
func CoverageGoal(pct float64) Option {
	return func(c *Config) {
		c.setField("Coverage.Goal", pct, func() {
			cc := coverage.Config{}
			if c.Coverage != nil {
				cc = *c.Coverage
			}
			cc.Goal = pct
			c.Coverage = &cc
		})
	}
}

// PCT draws schedules with PCT of the given depth (Config.PCTDepth).
func PCT(depth int) Option {
	return func(c *Config) { c.setField("PCTDepth", depth, func() { c.PCTDepth = depth }) }
}

// WithConfig sets every field that d sets (its non-zero fields), as the
// option of each would: a field another option set to a different value is
// a conflict. Only, Skip and Cases add up.
func WithConfig(d Config) Option {
	return func(c *Config) {
		dv := reflect.ValueOf(d)
		cv := reflect.ValueOf(c).Elem()
		t := dv.Type()
		var names []string
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() && !dv.Field(i).IsZero() {
				names = append(names, t.Field(i).Name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			f := dv.FieldByName(name)
			switch name {
			case "Only", "Skip", "Cases":
				dst := cv.FieldByName(name)
				dst.Set(reflect.AppendSlice(dst, f))
				continue
			case "Coverage":
				if c.Coverage != nil && c.set["Coverage.Goal"] != "" {
					// CoverageGoal came first: keep its goal unless d
					// sets another.
					cc := *d.Coverage
					if cc.Goal == 0 {
						cc.Goal = c.Coverage.Goal
					}
					c.setField("Coverage.Goal", cc.Goal, func() {})
					c.Coverage = &cc
					continue
				}
				if d.Coverage.Goal != 0 {
					c.setField("Coverage.Goal", d.Coverage.Goal, func() {})
				}
			}
			c.setField(name, printable(f), func() { cv.FieldByName(name).Set(f) })
		}
	}
}

// printable is a field's value as setField compares it: funcs, pointers
// and contexts by identity.
func printable(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Interface:
		if e := v.Elem(); e.Kind() == reflect.Pointer {
			return fmt.Sprintf("%s@%#x", e.Type(), e.Pointer())
		}
	case reflect.Func, reflect.Pointer, reflect.Map, reflect.Slice:
		return fmt.Sprintf("%s@%#x", v.Type(), v.Pointer())
	}
	return v.Interface()
}
