package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Pending is a file being written under a temporary name in its final
// directory: Commit makes it appear under its final name whole, Abort (or
// a failed Commit) removes it, so a failed write (a full disk, a killed
// process) never leaves a truncated file under the final name.
type Pending struct {
	*os.File
	path string
	done bool
}

// Create starts writing path; the data goes to "<path>.<random>.tmp".
func Create(path string) (*Pending, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	return &Pending{File: f, path: path}, nil
}

// Commit flushes the file to disk, closes it and renames it to its final
// name (mode 0644).
func (p *Pending) Commit() error {
	if p.done {
		return errors.New("safefile: commit after commit or abort")
	}
	p.done = true
	err := p.File.Sync()
	if cerr := p.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(p.File.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(p.File.Name(), p.path)
	}
	if err != nil {
		_ = os.Remove(p.File.Name())
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file (after Commit it does nothing).
func (p *Pending) Abort() {
	if p.done {
		return
	}
	p.done = true
	_ = p.File.Close()
	_ = os.Remove(p.File.Name())
}

// WriteFile writes data to path through a temporary file and a rename.
func WriteFile(path string, data []byte) error {
	p, err := Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := p.Write(data); err != nil {
		p.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return p.Commit()
}
