package ha_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/streamha/streamha"

// drivers run nodes: the simulator and the two real runtimes. They sit side
// by side over the runtime, and none imports another.
var drivers = []string{"sim", "cluster", "inproc"}

// runtimePackages are the packages drivers are built on: the common runtime
// and its subpackages (but the drivers and the test harness), the
// experiment model, the registry and every strategy.
func runtimePackage(p string) bool {
	switch {
	case slices.Contains(drivers, p), p == "ha/hatest":
		return false
	case p == "ha", strings.HasPrefix(p, "ha/"), p == "experiment", p == "strategies":
		return true
	}
	return slices.Contains([]string{"activestandby", "passivestandby", "upstreambackup", "globalcheckpoint"}, p)
}

// moduleImports maps each package of the module (directory relative to
// the root) to the module packages its non-test files import.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	deps := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if q, ok := strings.CutPrefix(p, modulePath+"/"); ok && !slices.Contains(deps[pkg], q) {
				deps[pkg] = append(deps[pkg], q)
			}
		}
		if _, ok := deps[pkg]; !ok {
			deps[pkg] = nil
		}
		return nil
	})
	require.NoError(t, err)
	return deps
}

// closure is every module package p depends on, directly or not.
func closure(deps map[string][]string, p string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		for _, d := range deps[q] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(p)
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// TestLayout: no runtime package depends on a driver, and no driver on
// another (what `go list -deps` shows, checked from the sources).
func TestLayout(t *testing.T) {
	deps := moduleImports(t, "..")
	require.Contains(t, deps, "ha")
	for p := range deps {
		all := closure(deps, p)
		switch {
		case runtimePackage(p):
			for _, d := range drivers {
				assert.NotContains(t, all, d, "runtime package %s depends on the driver %s", p, d)
			}
		case slices.Contains(drivers, p):
			for _, d := range drivers {
				if d != p {
					assert.NotContains(t, all, d, "driver %s depends on the driver %s", p, d)
				}
			}
		}
	}
}
