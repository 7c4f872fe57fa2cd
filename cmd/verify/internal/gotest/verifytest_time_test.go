package gotest

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
)

const passTest = `package demo

import "testing"

func TestOneWay(t *testing.T) {
	ch := make(chan int)
	go func() { ch <- 1 }()
	<-ch
}
`

// TestVerifyTestTime: --time without --runs keeps starting runs until the
// budget is spent, then stops cleanly: exit 0, "passed N runs in", the
// progress on stderr, the budget in the JSON report. --runs given with it
// still bounds the runs.
func TestVerifyTestTime(t *testing.T) {
	demoModule(t, map[string]string{"demo_test.go": passTest})
	start := time.Now()
	code, stdout, stderr := run(t, "test", ".", "--time", "2s", "--json")
	took := time.Since(start)
	if code != cli.ExitHolds {
		t.Fatalf("exit %d, want %d\n%s", code, cli.ExitHolds, stderr)
	}
	var rep testReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.Time != "2s" || rep.Runs != 0 || len(rep.Tests) != 1 || !rep.Tests[0].TimeUp || rep.Tests[0].Runs < 2 || rep.Tests[0].Seconds < 2 {
		t.Fatalf("report %+v", rep)
	}
	if took > 5*time.Minute {
		t.Errorf("--time 2s took %v", took)
	}
	wantAll(t, "stderr", stderr, "verify test: TestOneWay passed ", " runs in 2s (--time 2s)")
	if !regexp.MustCompile(`verify test: TestOneWay: \d+ runs in [0-9.]+m?s of 2s`).MatchString(stderr) {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}

	code, stdout, stderr = run(t, "test", ".", "--time", "10m", "--runs", "5", "--json", "-q")
	rep = testReport{}
	if err := json.Unmarshal([]byte(stdout), &rep); code != cli.ExitHolds || err != nil || len(rep.Tests) != 1 || rep.Tests[0].Runs != 5 || rep.Tests[0].TimeUp {
		t.Fatalf("--time 10m --runs 5: exit %d, %+v, %v\n%s", code, rep, err, stderr)
	}
}

// watched is stderr that calls fire once it has seen on.
type watched struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	on   string
	fire func()
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.fire != nil && strings.Contains(w.buf.String(), w.on) {
		w.fire()
		w.fire = nil
	}
	return len(p), nil
}

// TestVerifyTestTimeInterrupt: Ctrl-C during --time stops the runs at
// once (exit 3, interrupted), with the last progress of the test.
func TestVerifyTestTimeInterrupt(t *testing.T) {
	demoModule(t, map[string]string{"demo_test.go": passTest})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &watched{on: "verify test: TestOneWay: ", fire: cancel}
	var stdout bytes.Buffer
	start := time.Now()
	code := verify(ctx, []string{"test", ".", "--time", "10m"}, &stdout, stderr)
	out := stderr.buf.String()
	if code != cli.ExitUnknown || time.Since(start) > 5*time.Minute {
		t.Fatalf("exit %d after %v, want %d at once:\n%s", code, time.Since(start), cli.ExitUnknown, out)
	}
	wantAll(t, "stderr", out, "verify test: interrupted; what was found so far:", "(the last progress before the interrupt)", "did not end (TestOneWay)")
}
