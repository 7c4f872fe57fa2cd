package pool

import (
	"strings"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/execspec/execspec/properties/pool/internal/modversion"
)

// The package links golang.org/x/mod at the version go.mod selects; the
// tests place acknowledged defects around it.
const linkedModule = "golang.org/x/mod"

var linkedFunc = semver.Compare

func TestLibraryAcknowledgesByVersion(t *testing.T) {
	v, ok := modversion.Linked(linkedModule, linkedFunc)
	if !ok {
		t.Fatalf("%s not in the build information", linkedModule)
	}
	for _, c := range []struct {
		from, fixed string
		want        bool
	}{
		{"", "", true},
		{"v0.1.0", "", true},
		{"", "v99.0.0", true},
		{v, "v99.0.0", true},                             // From is inclusive
		{"v0.1.0", v, false},                             // Fixed is exclusive
		{"v99.0.0", "", false},                           // not yet
		{"", "v0.1.0", false},                            // fixed long ago
		{"v0.0.0-20200101000000-abcdefabcdef", "", true}, // a pseudo-version orders before releases
	} {
		lib := Library{Module: linkedModule, Func: linkedFunc, Known: []KnownDefect{{Key: Reuse, From: c.from, Fixed: c.fixed, Why: "test"}}}
		got, known, err := lib.acknowledged()
		if err != nil {
			t.Fatalf("[%s, %s): %v", c.from, c.fixed, err)
		}
		if got != v {
			t.Errorf("version %q, want %q", got, v)
		}
		if (len(known) == 1) != c.want {
			t.Errorf("%s in [%q, %q): acknowledged %v, want %v", v, c.from, c.fixed, known, c.want)
		}
	}
}

func TestLibraryRefusesBadDeclarations(t *testing.T) {
	for _, c := range []struct {
		lib  Library
		want string
	}{
		{Library{Module: linkedModule, Func: linkedFunc, Known: []KnownDefect{{Key: Reuse, Fixed: "2.0"}}}, `"2.0" is not a semantic version`},
		{Library{Module: linkedModule, Func: linkedFunc, Known: []KnownDefect{{Fixed: "v2.0.0"}}}, "has no Key"},
		{Library{Known: []KnownDefect{{Key: Reuse}}}, "without a Module"},
		{Library{Module: "example.com/not/linked", Func: linkedFunc, Known: []KnownDefect{{Key: Reuse}}}, "cannot be read"},
		{Library{Module: linkedModule, Known: []KnownDefect{{Key: Reuse}}}, "cannot be read"},
		{Library{Module: linkedModule, Func: 42, Known: []KnownDefect{{Key: Reuse}}}, "cannot be read"},
	} {
		_, _, err := c.lib.acknowledged()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error containing %q", c.lib, err, c.want)
		}
	}
}

// TestLibraryCheckSilencesOnlyItsVersion: the pool of TestNoMasking has a
// capacity and a reuse defect; acknowledged for the linked version, the
// reuse defect is counted, not reported; acknowledged only up to an older
// version, it is reported again.
func TestLibraryCheckSilencesOnlyItsVersion(t *testing.T) {
	newPool := func(o Options) Pool {
		return semAdapter(newSemPool(o.Capacity, func(p *semPool) { p.reusePanics, p.weightIgnored = true, true }), "weighted", "wait")
	}
	for _, c := range []struct {
		fixed     string
		wantReuse bool
	}{{"v99.0.0", false}, {"v0.1.0", true}} {
		lib := Library{Module: linkedModule, Func: linkedFunc, Known: []KnownDefect{{Key: Reuse, Fixed: c.fixed}}}
		cfg, err := lib.config(fast(Config{Capacity: 3}))
		if err != nil {
			t.Fatal(err)
		}
		got := keys(Explore(newPool, cfg).Err())
		if got[Reuse] != c.wantReuse || !got[CapacityBound] {
			t.Errorf("fixed in %s: findings %v, want reuse %v and capacity", c.fixed, got, c.wantReuse)
		}
	}
}

func TestLibraryCheckCorrectPool(t *testing.T) {
	lib := Library{Module: linkedModule, Func: linkedFunc, Known: []KnownDefect{{Key: CapacityBound, Fixed: "v0.1.0"}}}
	lib.Check(t,
		Target{Name: "fixed", New: func(Options) Pool { return newFixed(3, nil) }, Config: fast(Config{})},
		Target{Name: "sem", New: func(o Options) Pool { return semAdapter(newSemPool(o.Capacity, nil), "wait") }, Config: fast(Config{Capacity: 2})},
	)
}

func TestFlagsSizeZeroConfigs(t *testing.T) {
	defer func(c int, s uint64) { *flagCases, *flagSeed = c, s }(*flagCases, *flagSeed)
	*flagCases, *flagSeed = 0, 0
	if c := (Config{}).withDefaults(); c.Cases != DefaultCases || c.Seed != 1 {
		t.Errorf("no flags: %d cases, seed %d", c.Cases, c.Seed)
	}
	*flagCases, *flagSeed = 7, 9
	if c := (Config{}).withDefaults(); c.Cases != 7 || c.Seed != 9 {
		t.Errorf("flags 7, 9: %d cases, seed %d", c.Cases, c.Seed)
	}
	if c := (Config{Cases: 3, Seed: 4}).withDefaults(); c.Cases != 3 || c.Seed != 4 {
		t.Errorf("the Config's own values lost to the flags: %d cases, seed %d", c.Cases, c.Seed)
	}
}
