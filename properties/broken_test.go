package properties_test

import (
	"testing"
	"time"

	"github.com/execspec/execspec/checker"
	"github.com/execspec/execspec/properties"
	"github.com/execspec/execspec/properties/broken"
)

func TestBasesHold(t *testing.T) {
	for _, b := range broken.Bases() {
		t.Run(b.Name, func(t *testing.T) {
			properties.Run(t, b.New, properties.Checks(100))
		})
	}
}

func TestCatalogueCaught(t *testing.T) {
	for _, b := range broken.Catalogue() {
		t.Run(b.Name, func(t *testing.T) {
			rep := properties.Check(b.New, properties.Config{Checks: 200, StopAtFirst: true, ShrinkTime: time.Second})
			if rep.Verdict() != checker.Violated {
				t.Fatalf("%s (%s) not caught", b.Name, b.Bug)
			}
			for _, r := range rep.Results {
				if r.Verdict == checker.Violated {
					t.Logf("caught by %s in the %s run: case %d, %v to first detection, shrunk to size %d, %s\n%s", r.Caught, r.Property.Name, r.Cases, r.ToFailure, r.Counterexample.Size(), r.Detail, r.Counterexample)
				}
			}
		})
	}
}
