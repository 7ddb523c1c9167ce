package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamha/streamha/experiment"
	"github.com/streamha/streamha/reports"
)

// A run directory holds the files of exactly one run. Its marker file
// names the run (a fingerprint of what determines its result), so that a
// later command can tell "the same run again" from "a different run".
const (
	runMarker   = ".streamha-run"
	outRoot     = "streamha-out"
	latestLink  = "latest"
	stampLayout = "20060102-150405"
)

// runIdentity is what a run directory's marker records.
type runIdentity struct {
	// Mode is "sim" or "cluster".
	Mode string `json:"mode"`
	// Fingerprint hashes the experiment (after flags), the seed and the
	// strategies: two simulated runs with the same fingerprint write
	// byte-identical results.
	Fingerprint string `json:"fingerprint"`
	// Command is the command that reproduces the run.
	Command string `json:"command"`
}

// newRunIdentity fingerprints a run of e under the strategies.
func newRunIdentity(mode string, e *experiment.Experiment, names []string, command string) (runIdentity, error) {
	b, err := json.Marshal(struct {
		Mode       string
		Experiment *experiment.Experiment
		Strategies []string
	}{mode, e, names})
	if err != nil {
		return runIdentity{}, fmt.Errorf("fingerprint the run: %w", err)
	}
	sum := sha256.Sum256(b)
	return runIdentity{Mode: mode, Fingerprint: hex.EncodeToString(sum[:12]), Command: command}, nil
}

// outDirOptions say where a run writes.
type outDirOptions struct {
	// Out is the --out flag ("" = a new directory under streamha-out).
	Out string
	// Base names a new directory: <base>-<time>, with -2, -3 … if taken.
	Base string
	// Force replaces a directory holding a different run.
	Force bool
	// Reproducible says whether a run with the same fingerprint rewrites
	// the same files (simulated runs); real runs never are.
	Reproducible bool
	// Now stamps a new directory's name; it never enters the results.
	Now time.Time
}

// prepareOutDir returns the directory a run writes into, created, empty
// and marked with id. Without --out it is a new directory under
// streamha-out, and streamha-out/latest points at it. With --out:
// a new or empty directory is used as is; one holding the same simulated
// run is emptied and rewritten (the result will be identical); one holding
// a different run — or a real run, which cannot be reproduced — is a usage
// error unless Force, and then its files are removed first, so that a
// directory never mixes files of two runs. A non-empty directory that is
// not a run directory is never touched.
func prepareOutDir(o outDirOptions, id runIdentity) (string, error) {
	if o.Out == "" {
		dir, err := newStampedDir(outRoot, o.Base, o.Now)
		if err != nil {
			return "", err
		}
		if err := writeMarker(dir, id); err != nil {
			return "", err
		}
		linkLatest(outRoot, latestLink, dir)
		return dir, nil
	}
	dir := o.Out
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", usage("--out: %w", err)
		}
		return dir, writeMarker(dir, id)
	case err != nil:
		return "", usage("--out: %w", err)
	case len(entries) == 0:
		return dir, writeMarker(dir, id)
	}
	prev, isRun := readMarker(dir)
	if !isRun {
		if _, err := os.Stat(filepath.Join(dir, reports.ResultFile)); err == nil {
			isRun = true // written before run directories were marked
		}
	}
	if !isRun {
		return "", usage("--out %s: the directory holds files that are not a streamha run; give a new or empty directory", dir)
	}
	same := o.Reproducible && prev.Fingerprint == id.Fingerprint && prev.Mode == id.Mode
	if !same && !o.Force {
		what := "a different run"
		if prev.Command != "" {
			what += fmt.Sprintf(" (%s)", prev.Command)
		}
		if !o.Reproducible {
			what = "an earlier run (a real run cannot be reproduced, so it is kept)"
		}
		return "", usage("--out %s: the directory holds %s; choose another --out, leave --out out for a new directory under %s, or pass --force to replace it", dir, what, outRoot)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return "", fmt.Errorf("--out: clear the previous run: %w", err)
		}
	}
	return dir, writeMarker(dir, id)
}

// newStampedDir creates root/<base>-<stamp>, or -2, -3 … after it when
// that exists (two runs in the same second), and returns its path.
func newStampedDir(root, base string, now time.Time) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", root, err)
	}
	name := base + "-" + now.Format(stampLayout)
	for i := 1; ; i++ {
		dir := filepath.Join(root, name)
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create output directory: %w", err)
		}
	}
}

// linkLatest points root/name at dir (a symlink relative to root),
// replacing an earlier link. It is a convenience: where symlinks are not
// possible it does nothing, and a file or directory of that name is left
// alone.
func linkLatest(root, name, dir string) {
	link := filepath.Join(root, name)
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
		return
	}
	tmp := link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
		return
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
	}
}

func writeMarker(dir string, id runIdentity) error {
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, runMarker), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("mark the run directory: %w", err)
	}
	return nil
}

func readMarker(dir string) (runIdentity, bool) {
	b, err := os.ReadFile(filepath.Join(dir, runMarker))
	if err != nil {
		return runIdentity{}, false
	}
	var id runIdentity
	if err := json.Unmarshal(b, &id); err != nil || !strings.Contains(string(b), "fingerprint") {
		return runIdentity{}, false
	}
	return id, true
}

// removeIfUnused removes a run directory that holds nothing but its
// marker (a run that failed before writing anything), so that a failed
// command leaves no empty run behind.
func removeIfUnused(dir string) {
	if dir == "" {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != runMarker {
		return
	}
	_ = os.RemoveAll(dir)
}
