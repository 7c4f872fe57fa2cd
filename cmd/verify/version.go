package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/execspec/execspec/cmd/verify/internal/cli"
)

func init() {
	register(cli.Command{Name: "version", Summary: "print the module version, the Go version and the VCS revision of this build", Run: runVersion})
}

// versionInfo is what verify version prints: what debug.ReadBuildInfo
// knows of this build. A build from a module cache (go install
// module@version) has a module version; a build in a clone has "(devel)"
// and, when the go command saw the repository, its revision.
type versionInfo struct {
	Schema   int    `json:"schema"`
	Module   string `json:"module"`
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

func buildVersion() versionInfo {
	v := versionInfo{Schema: cli.JSONSchema, Module: "github.com/execspec/execspec", Version: "(unknown)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v.Module, v.Version = bi.Main.Path, bi.Main.Version
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// versionHelp is what `verify version -h` prints before the flags.
const versionHelp = `Usage: verify version [--json]

Prints the module version, the Go version and, when the build knows it, the
VCS revision (+dirty when the tree had changes) and its time.
`

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("verify version", stderr, versionHelp, "")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if code, ok := cli.ParseNoArgs(fs, args, stderr); !ok {
		return code
	}
	v := buildVersion()
	if *asJSON {
		cli.PrintJSON(stdout, v, false)
		return exitHolds
	}
	rev := ""
	if v.Revision != "" {
		rev = " " + v.Revision
		if v.Modified {
			rev += "+dirty"
		}
		if v.Time != "" {
			rev += " (" + v.Time + ")"
		}
	}
	fmt.Fprintf(stdout, "verify %s %s, %s%s\n", v.Module, v.Version, v.Go, rev)
	return exitHolds
}
