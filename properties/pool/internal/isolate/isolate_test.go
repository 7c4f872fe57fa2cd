package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPattern(t *testing.T) {
	if got := Pattern("TestA/b.c+"); got != `^TestA$/^b\.c\+$` {
		t.Errorf("Pattern: %s", got)
	}
}

func TestParseCrash(t *testing.T) {
	out := "ok\nfatal error: concurrent map writes\n\ngoroutine 9 [running]:\nruntime.mapassign_faststr(...)\n\t/go/src/runtime/map.go:1 +0x1\nexample.com/p.(*Pool).put(0x1)\n\t/p/pool.go:5 +0x2\n"
	c, ok := ParseCrash([]byte(out))
	if !ok || c.Site != "crash in example.com/p.(*Pool).put" || c.Message != "fatal error: concurrent map writes" || !strings.HasPrefix(c.Stack, "fatal error: ") {
		t.Errorf("got %+v, %v", c, ok)
	}
	if c, ok := ParseCrash([]byte("bye\n")); ok {
		t.Errorf("an exit without a panic parsed as a crash: %+v", c)
	}
}

// Under control the crash site is the pool's frame, past the runtime's,
// sync's, the controlled runtime's and the panic call itself.
func TestSiteUnderControl(t *testing.T) {
	stack := `goroutine 13 [running]:
runtime/debug.Stack()
	/usr/local/go/src/runtime/debug/stack.go:26 +0x5e
github.com/execspec/execspec/instrument/rt.(*run).exit(0x1, 0x2)
	/x/rt/sched.go:310 +0x5e
panic({0x5f1e20?, 0x6a4f40?})
	/usr/local/go/src/runtime/panic.go:783 +0x132
sync.(*WaitGroup).Add(0x1, 0xffffffffffffffff)
	/usr/local/go/src/sync/waitgroup.go:64 +0x1
github.com/execspec/execspec/instrument/rt/rtstd.(*WaitGroup).Add(0x1, 0x2)
	/x/rt/rtstd/sync.go:190 +0x1
example.com/ctlpool.(*Pool).Submit.func1()
	/x/ctlpool/pool.go:72 +0x1
`
	if got, want := Site(stack), "crash in example.com/ctlpool.(*Pool).Submit.func1"; got != want {
		t.Fatalf("Site = %q, want %q", got, want)
	}
}

// A record cut by a crash ends the log; the records before it stand.
func TestReadStopsAtACutRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte("{\"n\":1}\n{\"n\":2}\n{\"n\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, err := Read[struct{ N int }](path)
	if err != nil || len(recs) != 2 || recs[1].N != 2 {
		t.Fatalf("Read = %v, %v", recs, err)
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 4}
	for _, s := range []string{"abc", "def", "ghi"} {
		_, _ = b.Write([]byte(s))
	}
	if got := string(b.Bytes()); got != "fghi" {
		t.Fatalf("kept %q, want fghi", got)
	}
}

// A child reads back what its parent's Env gave it: its log, its call,
// and the keys already seen; a bad list of keys is an error naming the
// variable.
func TestEnvRoundTrip(t *testing.T) {
	for _, kv := range Env("/tmp/log.jsonl", 2, []string{"capacity", "progress/Resize"}) {
		k, v, _ := strings.Cut(kv, "=")
		if k == EnvLog || k == EnvCall || k == EnvSeen {
			t.Setenv(k, v)
		}
	}
	if path, mine := InChild(2); path != "/tmp/log.jsonl" || !mine {
		t.Errorf("InChild(2) = %q, %v", path, mine)
	}
	if _, mine := InChild(1); mine {
		t.Error("the child of call 2 runs call 1")
	}
	if seen, err := Seen(); err != nil || !slices.Equal(seen, []string{"capacity", "progress/Resize"}) {
		t.Errorf("Seen = %v, %v", seen, err)
	}
	t.Setenv(EnvSeen, "[3")
	if _, err := Seen(); err == nil || !strings.Contains(err.Error(), EnvSeen) {
		t.Errorf("a torn list: %v", err)
	}
}
