// Package text holds the property suite's small text helpers: a failure
// is printed in a bounded number of lines (Clip, Indent), its repeated
// lines said once with a count (FoldLines), and the file of its full
// detail named safely (FileSafe).
package text
