package instrument

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Format prints a rewritten file. With sourcePos the printer writes
// //line directives wherever the output's lines drift from the input's, so
// that compiler errors, panics and stacks name the original file and line.
func Format(fset *token.FileSet, f *ast.File, sourcePos bool) ([]byte, error) {
	mode := printer.UseSpaces | printer.TabIndent
	if sourcePos {
		mode |= printer.SourcePos
	}
	var b bytes.Buffer
	if err := (&printer.Config{Mode: mode, Tabwidth: 8}).Fprint(&b, fset, f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Config says what to build under control.
type Config struct {
	Dir        string   // the directory go test runs in (inside the user's module)
	Tests      []string // packages whose tests run under control (and whose own files are rewritten)
	Instrument []string // further packages rewritten wholesale (patterns: a module path, ./..., ...)
	Out        string   // a fresh directory for the rewritten files, overlay.json and, if needed, go.mod
	Root       string   // the execspec module's source, if the user's module does not require it ("" = find it)
}

// Build is an instrumented build ready for go test.
type Build struct {
	Overlay  string            // overlay.json, for go test -overlay
	ModFile  string            // for go test -modfile, when the runtime's module had to be added; "" otherwise
	Files    map[string]string // original file → rewritten file
	Counts   map[string]int    // rewrites by rule
	Packages []string          // the packages rewritten
	Tested   []string          // the packages whose tests run under control
	// Uncontrolled names the packages linked into the tests that are not
	// instrumented (the standard library apart): their goroutines,
	// channels and locks run outside the scheduler.
	Uncontrolled []string

	modcache string
	copies   map[string]string // module directory in the module cache → its copy in Out
	replaces []string          // module path => copy, for the modfile
	overlay  map[string]string
}

// Flags returns the go test flags for b.
func (b *Build) Flags() []string {
	fl := []string{"-overlay=" + b.Overlay}
	if b.ModFile != "" {
		fl = append(fl, "-modfile="+b.ModFile, "-mod=mod")
	}
	return fl
}

const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax |
	packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps | packages.NeedModule

// Errors of Instrument.
var (
	ErrNoMatch = errors.New("matches no package")
	ErrBuild   = errors.New("does not build")
	ErrNoTests = errors.New("has no test files")
)

// Instrument rewrites the packages of cfg into cfg.Out and writes the
// overlay that hands them to go test. Nothing is written outside cfg.Out.
func Instrument(cfg Config) (*Build, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, err
	}
	b := &Build{Files: map[string]string{}, Counts: map[string]int{}, copies: map[string]string{}, overlay: map[string]string{}}
	b.modcache = goEnv(cfg.Dir, "GOMODCACHE")
	lcfg := &packages.Config{Mode: loadMode, Dir: cfg.Dir, Tests: true}
	tested, err := packages.Load(lcfg, cfg.Tests...)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", strings.Join(cfg.Tests, " "), err)
	}
	if err := loadErrors(tested, cfg.Tests); err != nil {
		return nil, err
	}
	var extra []*packages.Package
	if len(cfg.Instrument) > 0 {
		lcfg.Tests = false
		extra, err = packages.Load(lcfg, cfg.Instrument...)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", strings.Join(cfg.Instrument, " "), err)
		}
		if err := loadErrors(extra, cfg.Instrument); err != nil {
			return nil, err
		}
	}
	rewritten := map[string]bool{}
	testBins := map[string]bool{}
	for _, p := range tested {
		if strings.HasSuffix(p.ID, ".test") {
			testBins[p.ID] = true
			continue
		}
		if !strings.Contains(p.ID, "[") {
			continue // the variant with the test files covers the package's own files
		}
		if !strings.HasSuffix(p.PkgPath, "_test") {
			b.Tested = append(b.Tested, p.PkgPath)
		}
		if err := b.rewrite(cfg.Out, p, true); err != nil {
			return nil, err
		}
		rewritten[p.PkgPath] = true
	}
	if len(b.Tested) == 0 {
		return nil, fmt.Errorf("%s %w", strings.Join(cfg.Tests, " "), ErrNoTests)
	}
	for _, p := range extra {
		if rewritten[p.PkgPath] {
			continue
		}
		if err := b.rewrite(cfg.Out, p, false); err != nil {
			return nil, err
		}
		rewritten[p.PkgPath] = true
	}
	for p := range rewritten {
		b.Packages = append(b.Packages, strings.TrimSuffix(p, "_test"))
	}
	b.Packages = dedup(b.Packages)
	b.Tested = dedup(b.Tested)
	seen := map[string]bool{}
	packages.Visit(tested, nil, func(p *packages.Package) {
		if seen[p.PkgPath] || rewritten[p.PkgPath] || p.Module == nil || testBins[p.ID] || strings.HasPrefix(p.PkgPath, "github.com/execspec/execspec/") {
			return
		}
		seen[p.PkgPath] = true
		b.Uncontrolled = append(b.Uncontrolled, p.PkgPath)
	})
	sort.Strings(b.Uncontrolled)
	if err := b.writeModFile(cfg); err != nil {
		return nil, err
	}
	ov, _ := json.MarshalIndent(struct{ Replace map[string]string }{b.overlay}, "", "\t")
	b.Overlay = filepath.Join(cfg.Out, "overlay.json")
	if err := os.WriteFile(b.Overlay, ov, 0o644); err != nil {
		return nil, err
	}
	return b, nil
}

func dedup(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

func loadErrors(pkgs []*packages.Package, patterns []string) error {
	if len(pkgs) == 0 {
		return fmt.Errorf("%s %w", strings.Join(patterns, " "), ErrNoMatch)
	}
	var errs []error
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			if strings.Contains(e.Msg, "cannot find package") || strings.Contains(e.Msg, "no required module") || strings.Contains(e.Msg, "matched no packages") || strings.Contains(e.Msg, "no Go files") {
				errs = append(errs, fmt.Errorf("%s %w: %s", p.PkgPath, ErrNoMatch, e.Msg))
				continue
			}
			errs = append(errs, fmt.Errorf("%s %w: %s", p.PkgPath, ErrBuild, e))
		}
	})
	if len(errs) > 10 {
		errs = append(errs[:10], fmt.Errorf("and %d more errors", len(errs)-10))
	}
	return errors.Join(errs...)
}

func (b *Build) rewrite(out string, p *packages.Package, tests bool) error {
	for i, f := range p.Syntax {
		name := p.CompiledGoFiles[i]
		if _, done := b.Files[name]; done || !strings.HasSuffix(name, ".go") {
			continue
		}
		w := &Rewriter{Info: p.TypesInfo, Tests: tests && strings.HasSuffix(name, "_test.go"), Counts: b.Counts}
		if !w.File(p.Fset, f) {
			continue
		}
		src, err := Format(p.Fset, f, true)
		if err != nil {
			return fmt.Errorf("%s: printing the rewritten file: %w", name, err)
		}
		if b.modcache != "" && p.Module != nil && strings.HasPrefix(name, b.modcache+string(filepath.Separator)) {
			// go test -overlay refuses files of the module cache: the
			// module is copied and replaced in the modfile instead.
			cp, err := b.copyModule(out, p.Module)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(p.Module.Dir, name)
			if err != nil {
				return err
			}
			dst := filepath.Join(cp, rel)
			if err := os.WriteFile(dst, src, 0o644); err != nil {
				return err
			}
			b.Files[name] = dst
			continue
		}
		h := sha256.Sum256([]byte(name))
		dst := filepath.Join(out, "src", hex.EncodeToString(h[:6]), filepath.Base(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return err
		}
		b.Files[name] = dst
		b.overlay[name] = dst
	}
	return nil
}

// copyModule copies a module of the module cache into out (once) and
// returns the copy's directory.
func (b *Build) copyModule(out string, m *packages.Module) (string, error) {
	if cp, ok := b.copies[m.Dir]; ok {
		return cp, nil
	}
	cp := filepath.Join(out, "mod", strings.ReplaceAll(m.Path, "/", "_")+"@"+m.Version)
	err := filepath.WalkDir(m.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.Dir, path)
		dst := filepath.Join(cp, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("copying module %s: %w", m.Path, err)
	}
	b.copies[m.Dir] = cp
	b.replaces = append(b.replaces, fmt.Sprintf("replace %s %s => %s", m.Path, m.Version, cp))
	return cp, nil
}

func goEnv(dir, name string) string {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// writeModFile writes, if needed, a copy of the user's go.mod and go.sum
// into cfg.Out that requires the runtime's module (from the source at
// cfg.Root, when the user's module does not require it) and replaces the
// copied modules. go test then runs with -modfile on it.
func (b *Build) writeModFile(cfg Config) error {
	var extra []string
	var extraSum []byte
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/execspec/execspec")
	cmd.Dir = cfg.Dir
	if out, err := cmd.Output(); err != nil || len(bytes.TrimSpace(out)) == 0 {
		root := cfg.Root
		if root == "" {
			root = SourceRoot()
		}
		if root == "" {
			return errors.New("the module in " + cfg.Dir + " does not require github.com/execspec/execspec and its source was not found to add it: add it to the module (go get github.com/execspec/execspec) or set EXECSPEC_ROOT")
		}
		extra = append(extra, "require github.com/execspec/execspec v0.0.0", "replace github.com/execspec/execspec => "+root)
		extraSum, _ = os.ReadFile(filepath.Join(root, "go.sum"))
	}
	extra = append(extra, b.replaces...)
	if len(extra) == 0 {
		return nil
	}
	gomod := goEnv(cfg.Dir, "GOMOD")
	if gomod == "" || gomod == os.DevNull {
		return fmt.Errorf("%s is not inside a Go module (go env GOMOD: %q)", cfg.Dir, gomod)
	}
	mod, err := os.ReadFile(gomod)
	if err != nil {
		return err
	}
	mod = append(mod, "\n"+strings.Join(extra, "\n")+"\n"...)
	sum, _ := os.ReadFile(strings.TrimSuffix(gomod, ".mod") + ".sum")
	sum = append(append(sum, '\n'), extraSum...)
	b.ModFile = filepath.Join(cfg.Out, "go.mod")
	if err := os.WriteFile(b.ModFile, mod, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cfg.Out, "go.sum"), sum, 0o644)
}

// SourceRoot returns the directory of the execspec module's source: the
// environment's EXECSPEC_ROOT, or the directory this package was built
// from if it is still there; "" if neither.
func SourceRoot() string {
	if r := os.Getenv("EXECSPEC_ROOT"); r != "" {
		return r
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	root := filepath.Dir(filepath.Dir(file))
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module github.com/execspec/execspec\n")) {
		return ""
	}
	return root
}
