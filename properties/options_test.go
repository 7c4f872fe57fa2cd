package properties

import (
	"strings"
	"testing"
	"time"

	"github.com/execspec/execspec/properties/coverage"
)

func apply(opts ...Option) *Config {
	c := &Config{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// TestOptionsCompose: each option sets its own field, in any order;
// WithConfig keeps what other options set; a field set to two values, or
// contradicting settings, are an error naming both.
func TestOptionsCompose(t *testing.T) {
	for _, order := range [][]Option{
		{Checks(7), WithConfig(Config{Timeout: time.Second}), FairnessBound(5), Seed(3), CoverageGoal(80), NoSpuriousPolls()},
		{NoSpuriousPolls(), CoverageGoal(80), Seed(3), FairnessBound(5), WithConfig(Config{Timeout: time.Second}), Checks(7)},
		{WithConfig(Config{Timeout: time.Second, Checks: 7, Seed: 3}), CoverageGoal(80), FairnessBound(5), NoSpuriousPolls()},
	} {
		c := apply(order...)
		if err := c.check(); err != nil {
			t.Fatal(err)
		}
		if c.Checks != 7 || c.Timeout != time.Second || c.FairnessBound != 5 || c.Seed != 3 || c.Coverage == nil || c.Coverage.Goal != 80 || !c.NoSpuriousPolls {
			t.Errorf("a setting was lost: %+v", c)
		}
	}
	// WithConfig after CoverageGoal keeps the goal and adds the rest.
	c := apply(CoverageGoal(70), WithConfig(Config{Coverage: &coverage.Config{Strategy: "guided"}}))
	if c.check() != nil || c.Coverage.Goal != 70 || c.Coverage.Strategy != "guided" {
		t.Errorf("coverage: %+v, %v", c.Coverage, c.check())
	}
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{Checks(5), Checks(6)}, "Checks set to 5 and to 6"},
		{[]Option{Checks(5), WithConfig(Config{Checks: 9})}, "Checks set to 5 and to 9"},
		{[]Option{FairnessBound(5), FairnessWait(time.Millisecond)}, "in polls (5) and one in time"},
		{[]Option{CoverageGoal(50), WithConfig(Config{Coverage: &coverage.Config{Goal: 60}})}, "Coverage.Goal set to 50 and to 60"},
		{[]Option{PCT(3), BlackBox()}, "PCT needs the controller"},
	} {
		err := apply(tc.opts...).check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error with %q, got %v", tc.want, err)
		}
	}
	// The same value twice is no conflict.
	if err := apply(Checks(5), WithConfig(Config{Checks: 5})).check(); err != nil {
		t.Errorf("the same value twice: %v", err)
	}
}
