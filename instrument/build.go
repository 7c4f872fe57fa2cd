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
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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
	Dir   string   // the directory go test runs in (inside the user's module)
	Tests []string // packages whose tests run under control (and whose own files are rewritten)
	// Instrument are further packages rewritten wholesale (patterns: a
	// module path, ./..., ...). A pattern without "..." also covers the
	// packages below it that the tests link (a module's path names the
	// module's packages).
	Instrument []string
	Out        string // a fresh directory for the rewritten files, overlay.json and, if needed, go.mod
	Root       string // the execspec module's source, if the user's module does not require it ("" = find it)
	// Cache, if set, keeps builds by the content of what they are built
	// from (the sources of the packages rewritten, go.mod and go.sum, the
	// Go version and the rewriter): a build whose inputs did not change is
	// not loaded, type-checked and rewritten again, and its files keep
	// their paths so that go's build cache holds their compiled form. The
	// build is then in a directory under Cache and Out is not used.
	Cache string
	// StdSync overlays the standard library's sync (stdsync.go) so that
	// its Mutex, RWMutex, WaitGroup, Once and Cond, whoever calls them
	// (the standard library, packages not instrumented), are controlled
	// when called by a controlled goroutine. The overlay is made from the
	// go command's own installation; a sync it does not know is refused
	// (ErrStdSync). Every package of the standard library that imports
	// sync is then compiled again once (go's build cache keeps it).
	StdSync bool
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
	// StdSync says that the standard library's sync is overlaid.
	StdSync bool
	// Cached says that the build was found in Config.Cache.
	Cached bool `json:"-"`

	modcache string
	copies   map[string]string // module directory in the module cache → its copy in Out
	replaces []string          // module path => copy, for the modfile
	overlay  map[string]string
}

// CompileTest compiles the tests of the package in dir, rewritten as b
// says, into the test binary bin (go test -c); an error carries the go
// command's output.
func (b *Build) CompileTest(dir, bin string) error {
	cmd := exec.Command("go", append(append([]string{"test", "-c", "-o", bin}, b.Flags()...), ".")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the instrumented tests in %s: %v\n%s", dir, err, out)
	}
	return nil
}

// Flags returns the go test flags for b.
func (b *Build) Flags() []string {
	fl := []string{"-overlay=" + b.Overlay}
	if b.ModFile != "" {
		fl = append(fl, "-modfile="+b.ModFile, "-mod=mod")
	}
	return fl
}

// loadMode type-checks the packages to rewrite from their source and takes
// the types of their dependencies from export data (compiled, and cached,
// by the go command): type-checking every dependency from source took
// most of an instrumented build's time.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax |
	packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule

// listMode lists the packages linked into the tests, with their files and
// modules, without type-checking anything.
const listMode = packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule

// Errors of Instrument.
var (
	ErrNoMatch = errors.New("matches no package")
	ErrBuild   = errors.New("does not build")
	ErrNoTests = errors.New("has no test files")
)

// Instrument rewrites the packages of cfg into cfg.Out (or a directory of
// cfg.Cache) and writes the overlay that hands them to go test. Nothing is
// written outside cfg.Out and cfg.Cache.
func Instrument(cfg Config) (*Build, error) {
	linked, err := packages.Load(&packages.Config{Mode: listMode, Dir: cfg.Dir, Tests: true}, cfg.Tests...)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", strings.Join(cfg.Tests, " "), err)
	}
	if err := loadErrors(linked, cfg.Tests); err != nil {
		return nil, err
	}
	patterns := expandPatterns(cfg.Instrument, linked)
	if cfg.Cache == "" {
		return instrument(cfg, patterns, linked)
	}
	key, err := buildKey(cfg, patterns, linked)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cfg.Cache, key)
	if b, err := readBuild(dir); err == nil {
		b.Cached = true
		now := time.Now()
		_ = os.Chtimes(dir, now, now)
		return b, nil
	}
	if err := os.MkdirAll(cfg.Cache, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(cfg.Cache, ".new-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// The build is made in its final directory (its paths are written
	// into overlay.json and go.mod), reserved by renaming the temporary
	// one; a concurrent builder of the same key keeps its own.
	if err := os.Rename(tmp, dir); err != nil {
		if b, err := readBuild(dir); err == nil {
			return b, nil
		}
		// Another build of the same inputs is being made: this one is
		// made apart, in cfg.Out, and not kept.
		return instrument(cfg, patterns, linked)
	}
	cfg.Out = dir
	b, err := instrument(cfg, patterns, linked)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := writeBuild(dir, b); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	pruneCache(cfg.Cache, dir)
	return b, nil
}

// expandPatterns adds, for each pattern that names a package path (not a
// file system path, no "..."), the packages below it that the tests link:
// a module's path then covers the module's packages.
func expandPatterns(patterns []string, linked []*packages.Package) []string {
	var out []string
	below := map[string]bool{}
	for _, pat := range patterns {
		out = append(out, pat)
		if strings.Contains(pat, "...") || strings.HasPrefix(pat, ".") || filepath.IsAbs(pat) {
			continue
		}
		packages.Visit(linked, nil, func(p *packages.Package) {
			if strings.HasPrefix(p.PkgPath, pat+"/") && !below[p.PkgPath] {
				below[p.PkgPath] = true
				out = append(out, p.PkgPath)
			}
		})
	}
	return out
}

// cacheVersion changes when the form of a cached build changes.
const cacheVersion = "execspec-build 2"

// buildKey hashes what a build is made from: the configuration, the Go
// version, the rewriter (the running executable), go.mod and go.sum, and
// the source files of every package that may be rewritten.
func buildKey(cfg Config, patterns []string, linked []*packages.Package) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%q\n%q\n%q\n%s\n%v %s\n", cacheVersion, runtime.Version(), cfg.Dir, cfg.Tests, patterns, cfg.Root, cfg.StdSync, goEnv(cfg.Dir, "GOVERSION"))
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "%s %d %d\n", exe, st.Size(), st.ModTime().UnixNano())
		}
	}
	if gomod := goEnv(cfg.Dir, "GOMOD"); gomod != "" {
		for _, f := range []string{gomod, strings.TrimSuffix(gomod, ".mod") + ".sum"} {
			data, _ := os.ReadFile(f)
			fmt.Fprintf(h, "%s %d\n", f, len(data))
			h.Write(data)
		}
	}
	var extra []*packages.Package
	if len(patterns) > 0 {
		var err error
		extra, err = packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles, Dir: cfg.Dir}, patterns...)
		if err != nil {
			return "", fmt.Errorf("loading %s: %w", strings.Join(patterns, " "), err)
		}
		if err := loadErrors(extra, patterns); err != nil {
			return "", err
		}
	}
	// The packages rewritten, and every package of a module outside the
	// module cache (their types shape the rewriting; those of the module
	// cache are named by go.sum).
	var files []string
	add := func(p *packages.Package) {
		files = append(files, p.GoFiles...)
		files = append(files, p.OtherFiles...)
		files = append(files, p.EmbedFiles...)
	}
	for _, p := range extra {
		add(p)
	}
	modcache := goEnv(cfg.Dir, "GOMODCACHE")
	packages.Visit(linked, nil, func(p *packages.Package) {
		if p.Module != nil && (modcache == "" || !strings.HasPrefix(p.Module.Dir, modcache+string(filepath.Separator))) {
			add(p)
		}
	})
	for _, f := range dedup(files) {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}

// The state of a Build that a cached one needs.
type buildFile struct {
	Build
	Copies       map[string]string
	Replaces     []string
	OverlayFiles map[string]string
}

func writeBuild(dir string, b *Build) error {
	data, err := json.Marshal(buildFile{Build: *b, Copies: b.copies, Replaces: b.replaces, OverlayFiles: b.overlay})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "build.json"), data, 0o644)
}

func readBuild(dir string) (*Build, error) {
	data, err := os.ReadFile(filepath.Join(dir, "build.json"))
	if err != nil {
		return nil, err
	}
	var f buildFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	b := f.Build
	b.copies, b.replaces, b.overlay = f.Copies, f.Replaces, f.OverlayFiles
	if _, err := os.Stat(b.Overlay); err != nil {
		return nil, err
	}
	return &b, nil
}

// cacheKeep is how many builds a cache keeps (the most recently used).
const cacheKeep = 8

// pruneCache removes the builds of cache beyond the cacheKeep most
// recently used, never keep.
func pruneCache(cache, keep string) {
	ents, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	type ent struct {
		path string
		t    time.Time
	}
	var es []ent
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if info, err := e.Info(); err == nil {
			es = append(es, ent{filepath.Join(cache, e.Name()), info.ModTime()})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].t.After(es[j].t) })
	for i, e := range es {
		if i >= cacheKeep && e.path != keep {
			os.RemoveAll(e.path)
		}
	}
}

func instrument(cfg Config, patterns []string, linked []*packages.Package) (*Build, error) {
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
	if len(patterns) > 0 {
		lcfg.Tests = false
		extra, err = packages.Load(lcfg, patterns...)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", strings.Join(patterns, " "), err)
		}
		if err := loadErrors(extra, patterns); err != nil {
			return nil, err
		}
	}
	rewritten := map[string]bool{}
	for _, p := range tested {
		if strings.HasSuffix(p.ID, ".test") {
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
	packages.Visit(linked, nil, func(p *packages.Package) {
		if seen[p.PkgPath] || rewritten[p.PkgPath] || p.Module == nil || strings.HasSuffix(p.ID, ".test") || strings.HasPrefix(p.PkgPath, "github.com/execspec/execspec/") {
			return
		}
		seen[p.PkgPath] = true
		b.Uncontrolled = append(b.Uncontrolled, p.PkgPath)
	})
	sort.Strings(b.Uncontrolled)
	if cfg.StdSync {
		goroot, version := goEnv(cfg.Dir, "GOROOT"), goEnv(cfg.Dir, "GOVERSION")
		if goroot == "" {
			return nil, fmt.Errorf("%w: go env GOROOT failed in %s", ErrStdSync, cfg.Dir)
		}
		files, err := StdSync(goroot, version, filepath.Join(cfg.Out, "stdsync"))
		if err != nil {
			return nil, err
		}
		for orig, dst := range files {
			b.overlay[orig] = dst
		}
		b.StdSync = true
	}
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
			if strings.Contains(e.Msg, "cannot find package") || strings.Contains(e.Msg, "no required module") || strings.Contains(e.Msg, "matched no packages") || strings.Contains(e.Msg, "no Go files") || strings.Contains(e.Msg, "directory not found") {
				errs = append(errs, fmt.Errorf("%s %w: %s", p.PkgPath, ErrNoMatch, e.Msg))
				continue
			}
			if e.Pos == "" || e.Pos == "-" {
				// No position: packages.Error would print "-: ".
				errs = append(errs, fmt.Errorf("%s %w: %s", p.PkgPath, ErrBuild, e.Msg))
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
	// The package-init rule, for the packages instrumented wholesale (not
	// those under test: their tests' own package-level state, flags
	// included, is the test binary's).
	var pi *PkgInit
	if !tests && len(p.CompiledGoFiles) == len(p.Syntax) && len(p.GoFiles) > 0 {
		if _, done := b.Files[filepath.Join(filepath.Dir(p.GoFiles[0]), PkgInitFile)]; !done {
			var err error
			if pi, err = PreparePkgInit(p.Fset, p.Types, p.TypesInfo, p.Syntax); err != nil {
				return err
			}
		}
	}
	for i, f := range p.Syntax {
		name := p.CompiledGoFiles[i]
		if _, done := b.Files[name]; done || !strings.HasSuffix(name, ".go") {
			continue
		}
		w := &Rewriter{Info: p.TypesInfo, Tests: tests && strings.HasSuffix(name, "_test.go"), Counts: b.Counts}
		if !w.File(p.Fset, f) && (pi == nil || !pi.Touches(i)) {
			continue
		}
		src, err := Format(p.Fset, f, true)
		if err != nil {
			return fmt.Errorf("%s: printing the rewritten file: %w", name, err)
		}
		if pi != nil {
			tail, err := pi.Tail(i)
			if err != nil {
				return fmt.Errorf("%s: printing the package-init rule: %w", name, err)
			}
			src = append(src, tail...)
		}
		if err := b.put(out, p, name, src); err != nil {
			return err
		}
	}
	if pi != nil {
		b.Counts[RulePkgInit]++
		return b.put(out, p, filepath.Join(filepath.Dir(p.GoFiles[0]), PkgInitFile), pi.Source())
	}
	return nil
}

// put writes src as the rewritten form of the file name of p (a file
// the package-init rule adds too): into the copy of its module if it is
// in the module cache, else into out, named in the overlay.
func (b *Build) put(out string, p *packages.Package, name string, src []byte) error {
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
		return nil
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
	if err == nil {
		err = raiseGo(cp, m.Path)
	}
	if err != nil {
		return "", fmt.Errorf("copying module %s: %w", m.Path, err)
	}
	b.copies[m.Dir] = cp
	b.replaces = append(b.replaces, fmt.Sprintf("replace %s %s => %s", m.Path, m.Version, cp))
	return cp, nil
}

// minGo is the least language version of a rewritten module: rewritten
// code calls the runtime's generic functions.
const minGo = 18

var goDirective = regexp.MustCompile(`(?m)^go[ \t]+1\.(\d+)(\.\d+)?[ \t]*(//.*)?$`)

// raiseGo makes the go.mod of the module copied into dir declare at least
// go 1.18 (a module without go.mod, from before modules, gets one): the
// language version of rewritten files must allow generics. It is raised no
// further (from 1.22 on, loop variables change meaning).
func raiseGo(dir, path string) error {
	name := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return os.WriteFile(name, fmt.Appendf(nil, "module %s\n\ngo 1.%d\n", path, minGo), 0o644)
	}
	if err != nil {
		return err
	}
	m := goDirective.FindSubmatchIndex(data)
	if m == nil {
		data = fmt.Appendf(data, "\ngo 1.%d\n", minGo)
	} else if v, _ := strconv.Atoi(string(data[m[2]:m[3]])); v < minGo {
		data = slices.Concat(data[:m[0]], fmt.Appendf(nil, "go 1.%d", minGo), data[m[1]:])
	} else {
		return nil
	}
	return os.WriteFile(name, data, 0o644)
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
