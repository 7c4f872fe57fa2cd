package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Clip keeps the first maxLines lines of s, each cut to width characters,
// and says how much it left out.
func Clip(s string, maxLines, width int) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i, l := range lines {
		if i == maxLines {
			out = append(out, fmt.Sprintf("… %d more lines", len(lines)-maxLines))
			break
		}
		if len(l) > width {
			cut := width
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut] + fmt.Sprintf("… (%d more characters)", len(l)-cut)
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// Indent puts prefix before each line of s, and ends it with a newline
// ("" stays "").
func Indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}

// FoldLines folds the repeated lines of s into their first, which gets
// the count: "line (12 times)".
func FoldLines(s string) string {
	lines := strings.Split(s, "\n")
	count := map[string]int{}
	for _, l := range lines {
		count[l]++
	}
	out := lines[:0:0]
	for _, l := range lines {
		switch n := count[l]; {
		case n == 0:
			continue
		case n > 1:
			out = append(out, fmt.Sprintf("%s (%d times)", l, n))
		default:
			out = append(out, l)
		}
		count[l] = 0
	}
	return strings.Join(out, "\n")
}

// FirstLine is the first line of s.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// FileSafe is s with every character but letters, digits, - and _
// made _, for a file name.
func FileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
