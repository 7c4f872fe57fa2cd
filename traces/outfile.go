package traces

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// OutputFile is a file being written in place of the path it is for.
//
// What the path may be, and how it is written:
//   - a new path or a regular file: the bytes go to a new file beside the
//     path, created exclusively (so a symbolic link planted at any name
//     cannot redirect them), and Commit renames it onto the path: a reader
//     sees the old file or the whole new one, never a part. Abort, or a
//     failed Commit, removes the new file and leaves the path as it was;
//   - a named pipe or a character device named directly (a terminal, a
//     FIFO another program reads): it is opened for writing as it is, never
//     created, truncated or replaced, and the bytes go to it as they are
//     written. A pipe that nobody reads is an error, not a wait;
//   - anything else is refused: a symbolic link (neither followed nor
//     replaced: /dev/stdout is one, name the file itself), a directory, a
//     socket, a block device.
//
// An OutputFile is not safe for concurrent use.
type OutputFile struct {
	f      *os.File
	name   string
	done   bool
	direct bool // f is the path itself (a pipe or a device), not a new file beside it
}

// ErrOutputIsInput is the error of CreateOutput when the output would
// replace one of the inputs.
var ErrOutputIsInput = errors.New("output file is one of the inputs")

// ErrOutputKind is the error of CreateOutput when the path is something an
// output is never written onto: a symbolic link, a directory, a socket or
// a block device.
var ErrOutputKind = errors.New("not a regular file, a new path, a named pipe or a character device")

// CreateOutput starts writing the file name, as OutputFile says. It
// refuses, with ErrOutputIsInput, to write onto any of inputs (the same
// path, or another name for the same file), and, with ErrOutputKind, a
// path that is neither a regular file, a new path, a named pipe nor a
// character device. A new file has mode 0644 once committed (os.CreateTemp
// makes it 0600 until then).
func CreateOutput(name string, inputs ...string) (*OutputFile, error) {
	if name == "" {
		return nil, errors.New("output file: empty name")
	}
	if err := sameAsInput(name, inputs); err != nil {
		return nil, err
	}
	st, err := os.Lstat(name)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, dirError(name, err)
	case err == nil:
		if err := outputKind(name, st); err != nil {
			return nil, err
		}
	}
	if err == nil && !st.Mode().IsRegular() {
		return openDirect(name, st)
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return nil, dirError(name, err)
	}
	return &OutputFile{f: f, name: name}, nil
}

// dirError is the error of an output file name whose directory cannot
// take it (missing, not a directory, not writable): it names the path
// asked for and its directory, not the temporary file's name.
func dirError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	dir := filepath.Dir(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("output file %s: its directory %s does not exist: %w", name, dir, err)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("output file %s: its directory %s is not a directory: %w", name, dir, err)
	}
	return fmt.Errorf("output file %s: cannot write in %s: %w", name, dir, err)
}

// outputKind refuses what an output is never written onto.
func outputKind(name string, st fs.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular(), m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		return nil
	case m&fs.ModeSymlink != 0:
		to, _ := os.Readlink(name)
		return fmt.Errorf("output file %s: a symbolic link (to %s), neither followed nor replaced; name the file itself: %w", name, Printable(to), ErrOutputKind)
	case m.IsDir():
		return fmt.Errorf("output file %s: a directory: %w", name, ErrOutputKind)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("output file %s: a socket: %w", name, ErrOutputKind)
	case m&fs.ModeDevice != 0:
		return fmt.Errorf("output file %s: a block device: %w", name, ErrOutputKind)
	}
	return fmt.Errorf("output file %s: mode %v: %w", name, m, ErrOutputKind)
}

// openDirect opens the named pipe or character device name, that Lstat
// described as st, for writing in place: no create, no truncate, no link
// followed, and it must still be the file st described once open.
func openDirect(name string, st fs.FileInfo) (*OutputFile, error) {
	flag := os.O_WRONLY | oNoFollow
	fifo := st.Mode()&fs.ModeNamedPipe != 0
	if fifo {
		flag |= oNonBlock // no reader: ENXIO at once, not a wait for ever
	}
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		if fifo && isNoReader(err) {
			return nil, fmt.Errorf("output file %s: a named pipe that nobody reads", name)
		}
		return nil, fmt.Errorf("output file: %w", err)
	}
	now, err := f.Stat()
	if err != nil || !os.SameFile(st, now) || now.Mode().Type() != st.Mode().Type() {
		f.Close()
		return nil, fmt.Errorf("output file %s: replaced while it was opened", name)
	}
	return &OutputFile{f: f, name: name, direct: true}, nil
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

// Commit closes the new file and renames it onto the path (for a pipe or
// a device, closes it). On error the new file is removed and the path is
// left as it was. The path is looked at again just before the rename: if
// something other than a regular file was put there meanwhile, it is not
// replaced.
func (o *OutputFile) Commit() error {
	if o.done {
		return fs.ErrClosed
	}
	o.done = true
	if o.direct {
		if err := o.f.Close(); err != nil {
			return fmt.Errorf("output file %s: %w", o.name, err)
		}
		return nil
	}
	tmp := o.f.Name()
	err := o.f.Chmod(0o644)
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if st, lerr := os.Lstat(o.name); lerr == nil && !st.Mode().IsRegular() {
			err = outputKind(o.name, st)
			if err == nil {
				err = fmt.Errorf("output file %s: became a %v while it was written: %w", o.name, st.Mode().Type(), ErrOutputKind)
			}
		}
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

// Abort removes the new file; the path is left as it was (a pipe or a
// device is closed: what was written to it is gone already). Abort after
// Commit does nothing, so it can be deferred.
func (o *OutputFile) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	if !o.direct {
		os.Remove(o.f.Name())
	}
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
