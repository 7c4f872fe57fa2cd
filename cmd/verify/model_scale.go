package main

import (
	"flag"

	"github.com/execspec/execspec/checker"
)

// scaleFlags are the flags of `verify model` for large state spaces: the
// compact store, and (search.go) bitstate and swarm searches.
type scaleFlags struct {
	compact bool
}

func (s *scaleFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.compact, "compact", false, "compact state store: about half the bytes per state, somewhat slower (safety and liveness)")
}

// apply sets the options the flags ask for.
func (s *scaleFlags) apply(o *checker.Options) {
	o.Compact = s.compact
}
