package instrument

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
)

// TestGoKer instruments three of the GoBench blocking kernels that ship
// with Go (read from GOROOT at run time, through bench/goker) and checks
// that each is found under control (a leak of the goroutines the kernel's
// bug blocks) and that its schedule replays ten times out of ten.
func TestGoKer(t *testing.T) {
	testenv.Slow(t, "builds the kernels (about 20 s)")
	root := sourceRoot(t)
	if _, err := os.Stat(filepath.Join(testenv.GOROOT(t), "src/runtime/testdata/testgoroutineleakprofile/goker/moby4951.go")); err != nil {
		testenv.SkipOutsideCI(t, "this Go installation has no GoBench kernels (Go 1.26 ships them)")
	}
	out := testenv.Go(t, root, "run", "./bench/goker", "-copies", "1", "-runs", "100", "-json", "-only", "^(Moby4951|Cockroach584|Etcd6708)$")
	found := 0
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r struct {
			Kernel   string
			Found    bool
			Kind     string
			Replayed int
			Error    string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if !r.Found || r.Kind != "leak" || r.Replayed != 10 || !strings.Contains(r.Error, "Lock at ") {
			t.Errorf("%s: %+v", r.Kernel, r)
		}
		found++
	}
	if found != 3 {
		t.Fatalf("%d kernels reported, want 3:\n%s", found, out)
	}
}
