package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamha/streamha/examples"
	"github.com/streamha/streamha/experiment"
)

// builtinExample returns the built-in example a command-line file name
// stands for when no such file exists: "union", "union.yaml" and
// "examples/union.yaml" all name examples/union.yaml, so every command
// the README and the help texts show works from an empty directory.
func builtinExample(path string) (name string, b []byte, ok bool) {
	if _, err := os.Stat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return "", nil, false
	}
	dir, base := filepath.Split(filepath.ToSlash(path))
	if dir != "" && dir != "examples/" {
		return "", nil, false
	}
	name = strings.TrimSuffix(base, ".yaml") + ".yaml"
	b, err := fs.ReadFile(examples.Files, name)
	if err != nil {
		return "", nil, false
	}
	return name, b, true
}

// exampleNames lists the built-in examples without their .yaml.
func exampleNames() []string {
	var names []string
	entries, _ := fs.ReadDir(examples.Files, ".")
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names
}

// missingFile explains a file named by flag that does not exist and is no
// built-in example.
func missingFile(flag, path string) error {
	return usage("%s %s: no such file, and no built-in example of that name (the examples: %s; "+
		"'streamha examples' lists them, 'streamha examples NAME' writes one out)",
		flag, path, strings.Join(exampleNames(), ", "))
}

// readExperimentFile reads the experiment file path names, falling back to
// a built-in example; name is what errors call it.
func readExperimentFile(flag, path string, o experiment.ParseOptions) (b []byte, name string, err error) {
	if ex, eb, ok := builtinExample(path); ok {
		return eb, "example " + ex, nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, "", missingFile(flag, path)
	}
	b, err = experiment.ReadFile(path, o)
	return b, path, err
}

// loadExperimentFile is experiment.LoadWith with the built-in examples as
// a fallback.
func loadExperimentFile(flag, path string, o experiment.ParseOptions) (*experiment.Experiment, error) {
	b, name, err := readExperimentFile(flag, path, o)
	if err != nil {
		return nil, err
	}
	return experiment.ParseWith(b, name, o)
}

// loadSweepSpec is experiment.LoadSweepFile with the built-in examples as a
// fallback; a built-in spec's experiment is the built-in one it names.
func loadSweepSpec(path string) (*experiment.SweepFile, error) {
	if ex, b, ok := builtinExample(path); ok {
		return experiment.ParseSweepFile(b, "example "+ex)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, missingFile("--spec", path)
	}
	return experiment.LoadSweepFile(path)
}
