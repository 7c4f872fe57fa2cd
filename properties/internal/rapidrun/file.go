package rapidrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteNew writes a fresh file at path, never through a symlink: the
// full detail of a failure and the engine's note, beside rapid's
// failfile.
func WriteNew(path, s string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscallNoFollow, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	return errors.Join(err, f.Close())
}
