package layout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/streamha/streamha"

// drivers run nodes: the simulator and the two real-time runtimes. They
// sit side by side over the runtime, and none imports another.
var drivers = []string{"sim", "inproc", "cluster"}

// registry is the production registry: one blank import per strategy.
const registry = "strategies/all"

// strategyPackages are the protocol packages beside strategies/.
var strategyPackages = []string{"activestandby", "passivestandby", "upstreambackup", "globalcheckpoint"}

// runtimePackage reports whether p is one the drivers are built on: the
// common runtime and its subpackages (but the test harness), the
// experiment model, the registry and every strategy.
func runtimePackage(p string) bool {
	switch {
	case p == "ha/hatest":
		return false
	case p == "ha", strings.HasPrefix(p, "ha/"), p == "experiment", p == "strategies", p == registry:
		return true
	}
	return slices.Contains(strategyPackages, p)
}

// pkg is one package of the module as its sources show it.
type pkg struct {
	// imports are the module packages its non-test files import.
	imports []string
	// testImports are the module packages its test files import.
	testImports []string
	// registers: a non-test file calls strategies.Register.
	registers bool
	// listsRegistry: a test file lists the registry (strategies.Names,
	// Registered or Soaked, or sim.SoakStrategies).
	listsRegistry bool
}

// calls reports whether f calls one of the functions named "pkg.Func".
func calls(f *ast.File, names ...string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && slices.Contains(names, id.Name+"."+sel.Sel.Name) {
				found = true
			}
		}
		return true
	})
	return found
}

// module is the module's packages, read once for every test.
var module struct {
	once sync.Once
	pkgs map[string]*pkg
	err  error
}

// readModule maps each package of the module (directory relative to the
// root) to what its sources import and call. Build tags are ignored: a
// file counts whatever platform it is built for.
func readModule(t *testing.T, root string) map[string]*pkg {
	t.Helper()
	module.once.Do(func() { module.pkgs, module.err = parseModule(root) })
	require.NoError(t, module.err)
	return module.pkgs
}

func parseModule(root string) (map[string]*pkg, error) {
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		test := strings.HasSuffix(path, "_test.go")
		mode := parser.ImportsOnly
		if strings.Contains(string(src), "strategies.") || strings.Contains(string(src), "SoakStrategies") {
			mode = parser.SkipObjectResolution
		}
		f, err := parser.ParseFile(fset, path, src, mode)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		name := filepath.ToSlash(rel)
		p := pkgs[name]
		if p == nil {
			p = &pkg{}
			pkgs[name] = p
		}
		imports := &p.imports
		if test {
			imports = &p.testImports
			p.listsRegistry = p.listsRegistry || calls(f, "strategies.Names", "strategies.Registered",
				"strategies.Soaked", "sim.SoakStrategies") || (name == "sim" && calls(f, "SoakStrategies"))
		} else {
			p.registers = p.registers || calls(f, "strategies.Register")
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if q, ok := strings.CutPrefix(path, modulePath+"/"); ok && !slices.Contains(*imports, q) {
				*imports = append(*imports, q)
			}
		}
		return nil
	})
	return pkgs, err
}

// closure is every module package p's non-test code depends on, directly
// or not.
func closure(pkgs map[string]*pkg, p string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(q string) {
		if pkgs[q] == nil {
			return
		}
		for _, d := range pkgs[q].imports {
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

// TestLayout checks the architecture on the import graph of the non-test
// code: no runtime package depends on a driver and no driver on another;
// the reports depend on no driver (they render data, they run nothing);
// no lab is imported by a runtime package, a driver or the reports; and a
// lab's student strategy is imported by the streamha command alone, so
// that a student's compile error breaks that command's build and nothing
// else.
func TestLayout(t *testing.T) {
	pkgs := readModule(t, "../..")
	for _, p := range append([]string{"ha", "reports", registry, "cmd/streamha"}, drivers...) {
		require.Contains(t, pkgs, p)
	}
	var student []string
	for name, p := range pkgs {
		if strings.HasPrefix(name, "labs/") && p.registers {
			student = append(student, name)
		}
	}
	require.NotEmpty(t, student, "lab 5's student strategy")
	for name := range pkgs {
		all := closure(pkgs, name)
		labs := slices.DeleteFunc(slices.Clone(all), func(d string) bool { return d != "labs" && !strings.HasPrefix(d, "labs/") })
		switch {
		case runtimePackage(name):
			for _, d := range drivers {
				assert.NotContains(t, all, d, "runtime package %s depends on the driver %s", name, d)
			}
			assert.Empty(t, labs, "runtime package %s depends on a lab", name)
		case slices.Contains(drivers, name):
			for _, d := range drivers {
				if d != name {
					assert.NotContains(t, all, d, "driver %s depends on the driver %s", name, d)
				}
			}
			assert.Empty(t, labs, "driver %s depends on a lab", name)
		case name == "reports":
			for _, d := range append([]string{"sweep"}, drivers...) {
				assert.NotContains(t, all, d, "reports depends on %s", d)
			}
			assert.Empty(t, labs, "reports depends on a lab")
		}
		for _, s := range student {
			if slices.Contains(pkgs[name].imports, s) {
				assert.Equal(t, "cmd/streamha", name, "%s imports the student strategy %s", name, s)
			}
		}
	}
}

// TestRegistryIsWhole checks that the production registry holds every
// strategy but the labs' student ones, and that every test that lists the
// registry (a registry-wide test: every strategy through the soak, the
// conformance suite, the message recycling …) runs with the whole of it,
// by importing strategies/all in its package's tests or code.
func TestRegistryIsWhole(t *testing.T) {
	pkgs := readModule(t, "../..")
	reg := pkgs[registry]
	require.NotNil(t, reg)
	registering := 0
	for name, p := range pkgs {
		if !p.registers || name == "strategies" || strings.HasPrefix(name, "labs/") {
			continue
		}
		registering++
		assert.Contains(t, reg.imports, name, "%s registers a strategy: add its blank import to %s", name, registry)
	}
	assert.Equal(t, len(strategyPackages), registering, "the strategy packages")
	listing := 0
	for name, p := range pkgs {
		if !p.listsRegistry {
			continue
		}
		listing++
		whole := slices.Contains(p.testImports, registry) || slices.Contains(closure(pkgs, name), registry)
		for _, q := range p.testImports {
			whole = whole || slices.Contains(closure(pkgs, q), registry)
		}
		assert.True(t, whole, "%s's tests list the registry: import %s in them, so they see every strategy", name, registry)
	}
	assert.GreaterOrEqual(t, listing, 3, "sim, the conformance suite and the command list the registry")
}
