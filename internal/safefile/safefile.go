// Package safefile opens the files streamha reads on a user's behalf
// (traces, output logs, result.json, experiment files, files served by
// 'streamha serve') so that a hostile or damaged file costs a bounded
// amount of memory and time: only regular files are read (a FIFO, a
// device such as /dev/zero or a directory is refused without blocking,
// symbolic links included), a file larger than its stated bound is
// refused from its size before a byte is read, and a file that grows
// past the bound while it is read stops at the bound with ErrTooLarge.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Bounds shared by the readers of streamha's own files.
const (
	// MaxTraceFile bounds a trace or an output log (JSON Lines).
	MaxTraceFile = 2 << 30
	// MaxSmallFile bounds a JSON document such as result.json.
	MaxSmallFile = 64 << 20
)

// ErrNotRegular is returned (wrapped) for a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned (wrapped) for a file above its bound.
var ErrTooLarge = errors.New("larger than its bound")

// File is a regular file open for reading that yields at most its bound.
type File struct {
	f    *os.File
	path string
	max  int64
	left int64
	size int64
}

// Open opens path for reading if it is a regular file of at most max
// bytes (max ≤ 0: no bound). It never blocks on a FIFO.
func Open(path string, max int64) (*File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	return check(f, path, max)
}

// OpenIn is Open for name inside root: a name or a symbolic link that
// resolves outside root is refused (os.Root).
func OpenIn(root *os.Root, name string, max int64) (*File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|noBlock, 0)
	if err != nil {
		return nil, err
	}
	return check(f, name, max)
}

// ReadFileIn is ReadFile for name inside root.
func ReadFileIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := OpenIn(root, name, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, name)
}

// check keeps f if it is a regular file within max bytes.
func check(f *os.File, path string, max int64) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, typeName(st.Mode()))
	}
	if max > 0 && st.Size() > max {
		f.Close()
		return nil, fmt.Errorf("%s: %w: %d bytes, the bound is %d", path, ErrTooLarge, st.Size(), max)
	}
	if max <= 0 {
		max = 1<<63 - 1
	}
	return &File{f: f, path: path, max: max, left: max, size: st.Size()}, nil
}

// typeName names a non-regular file type for an error.
func typeName(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeDevice != 0, m&os.ModeCharDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// Read reads up to the bound; a read past it fails with ErrTooLarge.
func (f *File) Read(p []byte) (int, error) {
	if f.left <= 0 {
		var one [1]byte
		if n, err := f.f.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%s: %w: grew past %d bytes while read", f.path, ErrTooLarge, f.max)
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.f.Read(p)
	f.left -= int64(n)
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Seek seeks within the file (for http.ServeContent); reads stay bounded
// by the bound from the start of the file.
func (f *File) Seek(off int64, whence int) (int64, error) {
	n, err := f.f.Seek(off, whence)
	if err == nil {
		f.left = f.max - n
	}
	return n, err
}

// Stat returns the file's information.
func (f *File) Stat() (os.FileInfo, error) { return f.f.Stat() }

// ReadFile reads a regular file of at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path)
}

// readAll reads f to its end or its bound.
func readAll(f *File, path string) ([]byte, error) {
	b := make([]byte, 0, min(f.size+1, 1<<20))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
}
