package cli

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultOutDir is where a command writes the files it was not told where
// to write — a counterexample's trace and timeline (model), a swarm
// member's result (model --swarm), a failure's trace (run) — so that
// nothing lands in the user's working tree unasked. It is one directory
// per kind under the user's cache directory (on Linux $XDG_CACHE_HOME or
// ~/.cache, then execspec/KIND), reused from run to run: a file of the same
// name is replaced whole, so the directory does not grow with the runs.
// Without a cache directory it is a new temporary directory.
func DefaultOutDir(kind string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return os.MkdirTemp("", "execspec-"+kind+"-")
	}
	dir := filepath.Join(base, "execspec", kind)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the default output directory: %w", err)
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("the default output directory %s is not a directory", dir)
	}
	return dir, nil
}
