package rapidrun

import (
	"flag"
	"regexp"
	"strconv"
	"sync"
)

// rapid reads its settings from package flags; the suite sets them for the
// length of a run, one run at a time.
var rapidMu sync.Mutex

// WithFlags runs fn with rapid's flags named in set ("rapid.checks",
// "rapid.seed", ...) set to their values, and then restores them (and
// rapid.nofailfile, which a spent time budget sets during fn). One call
// at a time: a second waits for the first to return.
func WithFlags(set map[string]string, fn func()) {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	old := map[string]string{}
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old["rapid.nofailfile"] = f.Value.String() // a spent --time sets it (properties/instrumented.go)
	}
	for k, v := range set {
		if f := flag.Lookup(k); f != nil {
			old[k] = f.Value.String()
			_ = f.Value.Set(v)
		}
	}
	defer func() {
		for k, v := range old {
			_ = flag.Lookup(k).Value.Set(v)
		}
	}()
	fn()
}

var (
	seedRE     = regexp.MustCompile(`-rapid\.seed=(\d+)`)
	failfileRE = regexp.MustCompile(`-rapid\.failfile="([^"]+)"`)
)

// Seed is the seed rapid's report of a failure gives to replay it.
func Seed(output string) (uint64, bool) {
	m := seedRE.FindStringSubmatch(output)
	if m == nil {
		return 0, false
	}
	seed, err := strconv.ParseUint(m[1], 10, 64)
	return seed, err == nil
}

// Failfile is the failfile rapid's report of a failure names.
func Failfile(output string) (string, bool) {
	m := failfileRE.FindStringSubmatch(output)
	if m == nil {
		return "", false
	}
	return m[1], true
}
