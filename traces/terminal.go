package traces

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s as it may be shown on a terminal or in a one-line
// report: every byte that a terminal would act on rather than show — C0 and
// C1 control characters (ESC starts a sequence that can clear the screen,
// retitle the window or move the cursor to forge a line), DEL, the Unicode
// format characters that reorder text (bidirectional overrides and
// isolates), and the line and paragraph separators — and every invalid UTF-8
// byte is written as a Go escape (\x1b, \u202e). Printable text is returned
// unchanged and without allocating. A trace's strings come from whoever
// wrote the trace, so every string of a trace passes through Printable
// before it reaches a terminal.
//
// Newlines and tabs are escaped too: a field of a trace is one line of a
// report, and a newline in it could forge the next line ("verdict: holds").
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			writeEscape(&b, 'x', uint32(s[i]), 2)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case unsafeRune(r, n):
			if r < 0x100 {
				writeEscape(&b, 'x', uint32(r), 2)
			} else {
				writeEscape(&b, 'u', uint32(r), 4)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether the rune r, decoded from n bytes, must be
// escaped by Printable.
func unsafeRune(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return true // invalid UTF-8
	case r < 0x20 || r == 0x7f:
		return true // C0 controls and DEL
	case r >= 0x80 && r < 0xa0:
		return true // C1 controls: 0x9b is a one-byte CSI on some terminals
	case r == 0x2028 || r == 0x2029:
		return true // line and paragraph separators
	case unicode.Is(unicode.Cf, r):
		return true // format characters: bidi overrides and isolates, zero-width joiners
	}
	return false
}

func writeEscape(b *strings.Builder, kind byte, v uint32, digits int) {
	const hex = "0123456789abcdef"
	b.WriteByte('\\')
	b.WriteByte(kind)
	for d := digits - 1; d >= 0; d-- {
		b.WriteByte(hex[(v>>(4*d))&0xf])
	}
}

// ShellQuote returns s quoted for a POSIX shell, so that a command that
// names s can be pasted and runs with s as one word whatever s holds: a
// path with spaces, quotes, "$(…)" or ";" included. Words made only of
// characters no shell treats specially are returned as they are, so the
// common case reads naturally. The result is also Printable: a control
// character in s is written with the shell's $'\xNN' quoting rather than
// raw, so the command can be shown on a terminal.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for i := 0; i < len(s); i++ {
		if !shellSafe(s[i]) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	if Printable(s) != s {
		// ANSI-C quoting ($'…'), understood by bash, zsh, ksh and
		// POSIX.1-2024 sh, is the only way to name a control byte
		// without writing it raw.
		var b strings.Builder
		b.WriteString("$'")
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == '\'' || r == '\\':
				b.WriteByte('\\')
				b.WriteByte(s[i])
			case unsafeRune(r, n):
				for j := i; j < i+n; j++ {
					writeEscape(&b, 'x', uint32(s[j]), 2)
				}
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
		}
		b.WriteByte('\'')
		return b.String()
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe reports whether c needs no quoting in any position of a word.
func shellSafe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_./:,+@%", c) >= 0
}
