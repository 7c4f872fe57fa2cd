package pool

import (
	"flag"
	"fmt"
	"slices"
	"sync"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/execspec/execspec/properties/pool/internal/modversion"
)

// The test flags that size a check whose Config leaves Cases or Seed zero,
// so that an adapter's test declares only what it knows (the library, the
// adapter, the configurations) and a long run is a flag away:
//
//	go test -run TestAnts ./ants -pool.cases=2000 -pool.seed=3
var (
	flagCases = flag.Int("pool.cases", 0, "pool: generated cases per check where Config.Cases is zero (0: DefaultCases)")
	flagSeed  = flag.Uint64("pool.seed", 0, "pool: seed of the generated cases where Config.Seed is zero (0: seed 1)")
)

// Library is what an adapter's test declares about the pool library it
// checks: the library's module path, one of its functions, and the defects
// acknowledged in some of its versions. The version checked is read from
// the binary (test binaries carry no module versions in their build
// information, so from where the function's source file lies in the
// module cache: ".../ants/v2@v2.12.1/pool.go"), so one test serves every
// version a go.mod (or a -modfile) selects, and a defect acknowledged for
// older versions is reported again where it should have been fixed.
//
// The zero Library acknowledges nothing. A Library is a value: Check may
// be called from parallel tests.
type Library struct {
	// Module is the library's module path, for example
	// "github.com/panjf2000/ants/v2".
	Module string
	// Func is a function of the library (ants.NewPool), or a method
	// expression: where the binary links it from tells the version. It is
	// needed with Known; without, the log cannot name the version.
	Func any
	// Known lists the acknowledged defects and the versions they hold in.
	Known []KnownDefect
}

// KnownDefect acknowledges a defect in a range of a library's versions:
// a finding whose Key is Key (a property, "capacity", or one trigger of
// it, "progress/Resize") is counted and logged in versions v with
// From ≤ v < Fixed, not reported. An empty From is the first version, an
// empty Fixed means not fixed in any version. Versions are semantic
// versions as the module proxy serves them (pseudo-versions included,
// ordered by their commit time).
type KnownDefect struct {
	Key         string
	From, Fixed string
	// Why names the defect for the log: an issue, a commit.
	Why string
}

// Target is one row of an adapter's test: a constructor for the pool
// (configured from each case's Options) and the Config it accepts.
type Target struct {
	// Name names the row's subtest; a lone row may leave it empty to run
	// in the calling test itself.
	Name   string
	New    func(Options) Pool
	Config Config
}

// Check runs CheckOptions for each target, as a subtest of t named by the
// target (a single unnamed target runs in t itself), with the defects lib
// acknowledges for the version the test binary links added to the
// target's Config.Known. It says in the log which version was checked and
// what was acknowledged. A Config with Cases or Seed zero takes them from
// the test flags -pool.cases and -pool.seed.
func (lib Library) Check(t *testing.T, targets ...Target) {
	t.Helper()
	if len(targets) == 0 {
		t.Fatal("pool: Library.Check without a target")
	}
	version, known, err := lib.acknowledged()
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	if lib.Module != "" && !(underControl() && loggedOnce(t.Name())) {
		// Under control the test runs once per case: said once.
		t.Logf("pool: %s %s; acknowledged: %s", lib.Module, version, describeKnown(known))
	}
	run := func(t *testing.T, tg Target) {
		t.Helper()
		if tg.New == nil {
			t.Fatalf("pool: target %q has no constructor", tg.Name)
		}
		cfg := tg.Config
		cfg.Known = append(slices.Clip(cfg.Known), knownKeys(known)...)
		CheckOptions(t, tg.New, cfg)
	}
	if len(targets) == 1 && targets[0].Name == "" {
		run(t, targets[0])
		return
	}
	if underControl() {
		// A controlled run is a synctest bubble, where t.Run is not
		// allowed: the targets run one after the other in the same run.
		for _, tg := range targets {
			if tg.Name == "" {
				t.Fatal("pool: Library.Check with several targets needs a Name for each")
			}
			t.Logf("pool: target %s", tg.Name)
			run(t, tg)
		}
		return
	}
	for _, tg := range targets {
		if tg.Name == "" {
			t.Fatal("pool: Library.Check with several targets needs a Name for each")
		}
		t.Run(tg.Name, func(t *testing.T) { run(t, tg) })
	}
}

// config is cfg with the defects lib acknowledges for the linked version
// added to its Known.
func (lib Library) config(cfg Config) (Config, error) {
	_, known, err := lib.acknowledged()
	if err != nil {
		return cfg, err
	}
	cfg.Known = append(slices.Clip(cfg.Known), knownKeys(known)...)
	return cfg, nil
}

// acknowledged returns the version of lib.Module the binary links and the
// defects acknowledged in it.
func (lib Library) acknowledged() (string, []KnownDefect, error) {
	for _, k := range lib.Known {
		for _, v := range []string{k.From, k.Fixed} {
			if v != "" && !semver.IsValid(v) {
				return "", nil, fmt.Errorf("known defect %q: %q is not a semantic version (want, for example, v2.11.4)", k.Key, v)
			}
		}
		if k.Key == "" {
			return "", nil, fmt.Errorf("a known defect of %s has no Key", lib.Module)
		}
	}
	if lib.Module == "" {
		if len(lib.Known) > 0 {
			return "", nil, fmt.Errorf("known defects without a Module: the version they hold in cannot be read")
		}
		return "", nil, nil
	}
	version, ok := modversion.Linked(lib.Module, lib.Func)
	if !ok && len(lib.Known) == 0 {
		return "(version not read: Library.Func is not set to a function of the module)", nil, nil
	}
	if !ok {
		return "", nil, fmt.Errorf("the version of %s linked into this binary cannot be read: Library.Func must be a function of that module (its source file in the module cache names the version)", lib.Module)
	}
	var known []KnownDefect
	for _, k := range lib.Known {
		if modversion.InRange(version, k.From, k.Fixed) {
			known = append(known, k)
		}
	}
	return version, known, nil
}

var logged sync.Map

// loggedOnce reports whether key was seen before, and marks it seen.
func loggedOnce(key string) bool {
	_, seen := logged.LoadOrStore(key, true)
	return seen
}

func knownKeys(known []KnownDefect) []string {
	out := make([]string, len(known))
	for i, k := range known {
		out[i] = k.Key
	}
	return out
}

func describeKnown(known []KnownDefect) string {
	if len(known) == 0 {
		return "none"
	}
	s := ""
	for i, k := range known {
		if i > 0 {
			s += ", "
		}
		s += k.Key
		if k.Why != "" {
			s += " (" + k.Why + ")"
		}
	}
	return s
}
