package text

import "testing"

func TestClip(t *testing.T) {
	if got, want := Clip("a\nb\nc\nd", 2, 10), "a\nb\n… 2 more lines"; got != want {
		t.Errorf("Clip lines = %q, want %q", got, want)
	}
	// A cut never splits a character: "é" is two bytes.
	if got, want := Clip("abé", 3, 3), "ab… (2 more characters)"; got != want {
		t.Errorf("Clip width = %q, want %q", got, want)
	}
}

func TestFoldLinesIndentFileSafe(t *testing.T) {
	if got, want := FoldLines("x\ny\nx\nx"), "x (3 times)\ny"; got != want {
		t.Errorf("FoldLines = %q, want %q", got, want)
	}
	if got, want := Indent("a\nb", "  "), "  a\n  b\n"; got != want || Indent("", "  ") != "" {
		t.Errorf("Indent = %q, want %q", got, want)
	}
	if got, want := FileSafe("TestX/sub case:1"), "TestX_sub_case_1"; got != want {
		t.Errorf("FileSafe = %q, want %q", got, want)
	}
	if got := FirstLine("one\ntwo"); got != "one" {
		t.Errorf("FirstLine = %q", got)
	}
}
