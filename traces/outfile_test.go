package traces

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execspec/execspec/internal/testenv"
)

func TestCreateOutputRefusesLink(t *testing.T) {
	dir := t.TempDir()
	planted := testenv.PlantLink(t, dir, "out.html")
	err := WriteOutput(planted.Link, func(o *OutputFile) error { _, err := io.WriteString(o, "new"); return err })
	if !errors.Is(err, ErrOutputKind) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("writing onto a link: %v, want ErrOutputKind naming the link", err)
	}
	planted.Kept(t)
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestCreateOutputRefusesInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.jsonl")
	os.WriteFile(in, []byte("trace"), 0o644)
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(in, link)
	hard := filepath.Join(dir, "hard.jsonl")
	os.Link(in, hard)
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{in, link, hard, rel, filepath.Join(dir, ".", "run.jsonl")} {
		if _, err := CreateOutput(name, in); !errors.Is(err, ErrOutputIsInput) {
			t.Errorf("CreateOutput(%s, input %s) = %v, want ErrOutputIsInput", name, in, err)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "trace" {
		t.Errorf("input changed: %q", b)
	}
}

func TestOutputFileFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.WriteFile(out, []byte("old"), 0o644)
	boom := errors.New("boom")
	err := WriteOutput(out, func(o *OutputFile) error { io.WriteString(o, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("out = %q after a failed write", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if _, err := CreateOutput(dir); err == nil {
		t.Errorf("a directory was accepted as an output file")
	}
}

func TestOutputFileMode(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	if err := WriteOutput(out, func(o *OutputFile) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", st.Mode(), err)
	}
}
