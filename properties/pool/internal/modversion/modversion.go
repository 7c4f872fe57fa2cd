package modversion

import (
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"

	gomodule "golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Linked is the version of module linked into the running binary:
// from its build information where it lists the module (a replaced module
// reports its replacement's version), else from the path of fn's source
// file, "<module>@<version>/..." in the module cache (with or without
// -trimpath).
func Linked(module string, fn any) (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path != module {
				continue
			}
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace.Version, true
			}
			if m.Replace == nil {
				return m.Version, true
			}
		}
	}
	if fn == nil {
		return "", false
	}
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return "", false
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return "", false
	}
	file, _ := f.FileLine(f.Entry())
	return InPath(filepath.ToSlash(file), module)
}

// InPath finds "<module>@<version>/" in a source file's path. The
// module cache escapes capital letters in both ("!azure"); the version
// is unescaped before it is compared.
//
// A module rewritten for the controlled runtime is built from a copy
// named with the module's slashes made underscores
// (".../mod/github.com_panjf2000_ants_v2@v2.12.1/pool.go", instrument's
// copies of module-cache modules); that name is read too.
func InPath(file, module string) (string, bool) {
	esc, err := gomodule.EscapePath(module)
	if err != nil {
		return "", false
	}
	i := strings.Index(file, esc+"@")
	if i < 0 {
		esc = strings.ReplaceAll(module, "/", "_")
		i = strings.Index(file, esc+"@")
	}
	if i < 0 || (i > 0 && file[i-1] != '/') {
		return "", false
	}
	rest := file[i+len(esc)+1:]
	j := strings.IndexByte(rest, '/')
	if j < 0 {
		return "", false
	}
	v, err := gomodule.UnescapeVersion(rest[:j])
	if err != nil || !semver.IsValid(v) {
		return "", false
	}
	return v, true
}

// InRange reports from ≤ v < fixed, with empty bounds open. A version that
// is not a semantic version (a directory replacement) is in no bounded
// range: nothing is acknowledged that cannot be placed.
func InRange(v, from, fixed string) bool {
	if !semver.IsValid(v) {
		return from == "" && fixed == ""
	}
	return (from == "" || semver.Compare(from, v) <= 0) && (fixed == "" || semver.Compare(v, fixed) < 0)
}
