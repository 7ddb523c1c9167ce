package hatest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamha/streamha/ha"
)

// rewrite makes Walk write each script back with the output the nodes
// produced instead of comparing it.
var rewrite = flag.Bool("rewrite", false, "rewrite interaction scripts with the output the nodes produce")

// Walk runs every script under dir as a subtest named by its path, each
// in a fresh InteractionEnv, and fails a script whose output differs from
// the transcript it holds (with -rewrite, writes the transcript instead).
func Walk(t *testing.T, dir string) {
	t.Helper()
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scripts under %s", dir)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.ToSlash(strings.TrimPrefix(path, dir+string(filepath.Separator))), ".txt")
		t.Run(name, func(t *testing.T) { RunScript(t, path) })
	}
}

// RunScript runs one script (see Walk).
func RunScript(t *testing.T, path string) {
	t.Helper()
	s, err := readScript(path)
	if err != nil {
		t.Fatal(err)
	}
	outs, diff := s.run(0, !*rewrite)
	if diff != "" {
		t.Error(diff)
		return
	}
	if *rewrite {
		if err := os.WriteFile(path, s.Format(outs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScript(path, data)
}

// run runs the script's commands in a fresh environment with the bugs
// plant added to every setup; with stop, it stops at the first output
// that differs from the transcript and describes the difference.
func (s *Script) run(plant ha.Planted, stop bool) (outs []string, diff string) {
	e := NewInteractionEnv()
	e.plant = plant
	outs = make([]string, len(s.Cmds))
	for i, c := range s.Cmds {
		out, err := e.Handle(c)
		if err != nil {
			out = "error: " + err.Error()
		}
		outs[i] = out
		if stop && out != c.Expected {
			return outs, fmt.Sprintf("%s: %s: output differs (run with -rewrite and read the diff)\n--- want\n%s\n--- got\n%s", c.Pos, c.line, c.Expected, out)
		}
	}
	return outs, ""
}

// Fixes lists the bugs a script says it guards: its comment lines
// "# fix: name" (names of ha.PlantedNames).
func (s *Script) Fixes() []string {
	var names []string
	for _, c := range s.Cmds {
		for _, l := range c.lead {
			if name, ok := strings.CutPrefix(l, "# fix: "); ok {
				names = append(names, strings.TrimSpace(name))
			}
		}
	}
	return names
}

// WalkFixes runs every script under dir that names a fix ("# fix: name")
// once more with that bug planted, and fails unless its transcript then
// differs: a script that cannot tell the fix from the bug guards nothing.
// It returns how many (script, fix) pairs it checked.
func WalkFixes(t *testing.T, dir string) int {
	t.Helper()
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		s, err := readScript(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range s.Fixes() {
			checked++
			t.Run(strings.TrimSuffix(filepath.Base(path), ".txt")+"/"+name, func(t *testing.T) {
				p, err := ha.ParsePlanted(name)
				if err != nil {
					t.Fatal(err)
				}
				if _, diff := s.run(p, true); diff == "" {
					t.Errorf("%s: the transcript is the same with %s planted", path, name)
				}
			})
		}
	}
	return checked
}
