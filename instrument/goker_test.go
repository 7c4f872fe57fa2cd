package instrument

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoKer instruments three of the GoBench blocking kernels that ship
// with Go (read from GOROOT at run time, through bench/goker) and checks
// that each is found under control (a leak of the goroutines the kernel's
// bug blocks) and that its schedule replays ten times out of ten.
func TestGoKer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kernels (about 20 s)")
	}
	root := SourceRoot()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil || root == "" {
		skipOutsideCI(t, "no go command or module source at hand")
	}
	if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(goroot)), "src/runtime/testdata/testgoroutineleakprofile/goker/moby4951.go")); err != nil {
		skipOutsideCI(t, "this Go installation has no GoBench kernels (Go 1.26 ships them)")
	}
	cmd := exec.Command("go", "run", "./bench/goker", "-copies", "1", "-runs", "100", "-json", "-only", "^(Moby4951|Cockroach584|Etcd6708)$")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench/goker: %v\n%s", err, out)
	}
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
