package traces

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// OutputFile is a file being written in place of the path it is for. The
// bytes go to a new file beside the path, created exclusively (so a symbolic
// link planted at any name cannot redirect them), and Commit renames it onto
// the path: a reader sees the old file or the whole new one, never a part,
// and a symbolic link at the path is replaced, not followed. Abort, or a
// failed Commit, removes the new file and leaves the path as it was.
//
// An OutputFile is not safe for concurrent use.
type OutputFile struct {
	f    *os.File
	name string
	done bool
}

// ErrOutputIsInput is the error of CreateOutput when the output would
// replace one of the inputs.
var ErrOutputIsInput = errors.New("output file is one of the inputs")

// CreateOutput starts writing the file name. It refuses, with
// ErrOutputIsInput, to write onto any of inputs (the same path, or another
// name for the same file), and refuses a name that is a directory. The file
// has mode 0644 once committed (os.CreateTemp makes it 0600 until then).
func CreateOutput(name string, inputs ...string) (*OutputFile, error) {
	if name == "" {
		return nil, errors.New("output file: empty name")
	}
	st, err := os.Lstat(name)
	switch {
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("output file %s: is a directory", name)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("output file: %w", err)
	}
	if err := sameAsInput(name, inputs); err != nil {
		return nil, err
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("output file: %w", err)
	}
	return &OutputFile{f: f, name: name}, nil
}

// sameAsInput reports ErrOutputIsInput when name names the same file as
// one of inputs: through a link, a relative path, or the same string.
func sameAsInput(name string, inputs []string) error {
	abs, _ := filepath.Abs(name)
	out, errOut := os.Stat(name) // follows a link: writing must not replace what it points to either
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if inAbs, _ := filepath.Abs(in); inAbs == abs {
			return fmt.Errorf("%s: %w", name, ErrOutputIsInput)
		}
		if errOut != nil {
			continue
		}
		if st, err := os.Stat(in); err == nil && os.SameFile(out, st) {
			return fmt.Errorf("%s: %w (%s)", name, ErrOutputIsInput, in)
		}
	}
	return nil
}

// Name returns the path the file is for.
func (o *OutputFile) Name() string { return o.name }

// Write writes to the new file.
func (o *OutputFile) Write(p []byte) (int, error) {
	if o.done {
		return 0, fs.ErrClosed
	}
	return o.f.Write(p)
}

// Commit closes the new file and renames it onto the path. On error the new
// file is removed and the path is left as it was.
func (o *OutputFile) Commit() error {
	if o.done {
		return fs.ErrClosed
	}
	o.done = true
	tmp := o.f.Name()
	err := o.f.Chmod(0o644)
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, o.name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("output file %s: %w", o.name, err)
	}
	return nil
}

// Abort removes the new file; the path is left as it was. Abort after
// Commit does nothing, so it can be deferred.
func (o *OutputFile) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	os.Remove(o.f.Name())
}

// WriteOutput writes the file name with write, through CreateOutput:
// atomically, never through a link, never onto one of inputs.
func WriteOutput(name string, write func(*OutputFile) error, inputs ...string) error {
	o, err := CreateOutput(name, inputs...)
	if err != nil {
		return err
	}
	defer o.Abort()
	if err := write(o); err != nil {
		return err
	}
	return o.Commit()
}
