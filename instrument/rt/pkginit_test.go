package rt

import (
	"errors"
	"strings"
	"testing"

	"github.com/execspec/execspec/instrument/rt/pkginit"
	"github.com/execspec/execspec/properties/control"
)

// withFakePackage registers a package as the rewriter's package-init
// rule would, for the rest of the test.
func withFakePackage(t *testing.T, path string, run func(keep func(func()))) {
	t.Helper()
	was := packages
	packages = &pkginit.Registry{}
	packages.Register(path, run)
	t.Cleanup(func() { packages = was })
}

// A package whose initialisation starts a server goroutine (a default
// pool's dispatcher): in each run it is initialised afresh, its goroutine
// is controlled (it answers on a channel of the run, which a goroutine
// outside the bubble could not), it does not keep the run from ending,
// its steps are in the schedule (a replay reproduces them), and the
// program's values are back after each run. A body that blocks for good
// is still a deadlock, named without the server.
func TestPackageInitPerRun(t *testing.T) {
	var requests chan chan int
	var inits int
	programs := make(chan chan int)
	requests = programs
	withFakePackage(t, "example.com/server", func(keep func(func())) {
		keep(pkginit.Keep(&requests))
		keep(pkginit.Keep(&inits))
		inits++
		requests = make(chan chan int)
		ch := requests
		Go(func() {
			n := 0
			for {
				reply := Recv(ch)
				n++
				To(reply).Send(n)
			}
		})
	})
	ask := func() int {
		reply := make(chan int)
		To(requests).Send(reply)
		return Recv(reply)
	}
	for seed := range uint64(10) {
		var got, n int
		s, err := Run(t, Config{Strategy: control.Random(seed)}, func(*testing.T) {
			got, n = ask(), inits
			got += ask() - 2
		})
		if err != nil || got != 1 || n != 1 {
			t.Fatalf("seed %d: answered %d after %d initialisations, %v; want 1 after 1", seed, got, n, err)
		}
		if requests != programs || inits != 0 {
			t.Fatalf("seed %d: the program's values are not back", seed)
		}
		if err := Replay(t, s, func(*testing.T) { ask() }); err == nil {
			t.Fatalf("seed %d: a replay of another body did not diverge", seed)
		}
		if err := Replay(t, s, func(*testing.T) { got = ask(); got += ask() - 2 }); err != nil {
			t.Fatalf("seed %d: replay: %v", seed, err)
		}
	}
	_, err := Run(t, Config{Strategy: control.Random(1)}, func(*testing.T) { Recv(make(chan int)) })
	var h *HangError
	if !errors.As(err, &h) || h.Leak || len(h.Blocked) != 2 {
		t.Fatalf("a blocked body: %v", err)
	}
	_, err = Run(t, Config{Strategy: control.Random(1)}, func(*testing.T) {
		c := make(chan int)
		Go(func() { Recv(c) })
	})
	if !errors.As(err, &h) || !h.Leak || len(h.Blocked) != 1 {
		t.Fatalf("a leak of the body: %v", err)
	}
}

// A package whose initialisation panics fails every run, naming it.
func TestPackageInitPanics(t *testing.T) {
	withFakePackage(t, "example.com/broken", func(keep func(func())) { panic("flag redefined: v") })
	_, err := Run(t, Config{Strategy: control.Random(1)}, func(*testing.T) {})
	if err == nil || !strings.Contains(err.Error(), "initialising package example.com/broken") {
		t.Fatalf("got %v", err)
	}
}
