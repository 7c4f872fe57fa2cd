//go:build linux

package traces

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe named as an output is written in place while someone reads
// it, refused when nobody does, and stays a pipe either way.
func TestCreateOutputNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	start := time.Now()
	_, err := CreateOutput(fifo)
	if err == nil || !strings.Contains(err.Error(), "nobody reads") {
		t.Errorf("a pipe without a reader: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("waited %v for a reader", d)
	}
	// The reader opens first (without waiting for a writer) and reads
	// once the writer is done: the few bytes wait in the pipe.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteOutput(fifo, func(o *OutputFile) error { _, err := io.WriteString(o, "through the pipe"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(r); string(b) != "through the pipe" {
		t.Errorf("the reader got %q", b)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", st.Mode(), err)
	}
}

// A character device is written in place, never replaced by a regular
// file; a socket and a block device are refused. The nodes are made in a
// temporary directory (never the system's /dev).
func TestCreateOutputDevices(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
		t.Skip("mknod (needs root):", err)
	}
	if err := WriteOutput(null, func(o *OutputFile) error { _, err := io.WriteString(o, "gone"); return err }); err != nil {
		t.Fatalf("writing to a character device: %v", err)
	}
	if st, err := os.Lstat(null); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device was replaced: %v %v", st.Mode(), err)
	}
	block := filepath.Join(dir, "block")
	if err := syscall.Mknod(block, syscall.S_IFBLK|0o600, int(mkdev(7, 200))); err == nil {
		if _, err := CreateOutput(block); !errors.Is(err, ErrOutputKind) {
			t.Errorf("a block device: %v, want ErrOutputKind", err)
		}
	}
	sock := filepath.Join(dir, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
		if _, err := CreateOutput(sock); !errors.Is(err, ErrOutputKind) {
			t.Errorf("a socket: %v, want ErrOutputKind", err)
		}
	}
	if _, err := CreateOutput(dir); !errors.Is(err, ErrOutputKind) {
		t.Errorf("a directory: %v, want ErrOutputKind", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func mkdev(major, minor uint32) uint64 {
	return uint64(major)<<8 | uint64(minor) // the Linux encoding for small numbers
}
