package ha_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/ha"
)

// surfaceHA is package ha's import path, surfaceModule the module's.
var (
	surfaceHA     = reflect.TypeFor[ha.Node]().PkgPath()
	surfaceModule = path.Dir(surfaceHA)
)

// entryPoints are the driver's entry points: a strategy runs inside one
// and never calls another.
var entryPoints = []string{"Start", "Handle", "Deliver", "Fire", "PeerDown", "PeerUp"}

// methodNames is the set of method names of an interface or pointer type.
func methodNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumMethod() {
		out[t.Method(i).Name] = true
	}
	return out
}

// TestSurfaces: every exported method of ha.Node belongs to the driver's
// surface (ha.Driver), the strategy's (ha.Runtime) or both; the entry
// points are the driver's alone; and, checked from the sources of every
// package of the module but ha itself, a strategy package (one whose
// Strategy.Hooks takes a *ha.Node) calls only Runtime's methods of a Node
// and any other package only Driver's.
func TestSurfaces(t *testing.T) {
	driver := methodNames(reflect.TypeFor[ha.Driver]())
	runtime := methodNames(reflect.TypeFor[ha.Runtime]())
	for m := range methodNames(reflect.TypeFor[*ha.Node]()) {
		assert.True(t, driver[m] || runtime[m], "Node.%s is in neither ha.Driver nor ha.Runtime: say whose it is", m)
	}
	for _, m := range entryPoints {
		assert.True(t, driver[m], "Node.%s is a driver entry point", m)
		assert.False(t, runtime[m], "Node.%s is a driver entry point, not a strategy's", m)
	}

	pkgs := nodeUses(t, "..")
	kinds := map[string]bool{}
	for _, p := range pkgs {
		kinds[p.path] = p.strategy
		for _, u := range p.uses {
			if p.strategy {
				assert.True(t, runtime[u.method], "%s: strategy package %s uses Node.%s, which is not in ha.Runtime (a hook hands held input over with Node.Inject)", u.pos, p.path, u.method)
			} else {
				assert.True(t, driver[u.method], "%s: package %s uses Node.%s, a strategy's method (not in ha.Driver)", u.pos, p.path, u.method)
			}
		}
	}
	// The check saw what it is about: the simulator drives nodes, active
	// standby is a strategy.
	assert.Equal(t, false, kinds["sim"], "sim is checked as a driver")
	assert.Equal(t, true, kinds["activestandby"], "activestandby is checked as a strategy")
}

// nodeUse is one use of a method of ha.Node outside package ha.
type nodeUse struct {
	pos    token.Position
	method string
}

// usingPackage is a package of the module that uses methods of ha.Node.
type usingPackage struct {
	path     string // relative to the module root
	strategy bool   // it implements ha.Strategy
	uses     []nodeUse
}

// nodeUses type-checks every package of the module under root (non-test
// files, this platform's build constraints) and returns, per package but
// ha itself, the methods of ha.Node its code selects. Packages outside the
// module are not read: they stand in empty, so expressions of their types
// stay unresolved, which no selection on a Node needs.
func nodeUses(t *testing.T, root string) []usingPackage {
	t.Helper()
	im := &sourceImporter{root: root, fset: token.NewFileSet(), pkgs: map[string]*types.Package{}, infos: map[string]*types.Info{}}
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel := filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(dirs)
	var out []usingPackage
	for _, rel := range dirs {
		if rel == "ha" {
			continue
		}
		pkg, err := im.Import(path.Join(surfaceModule, rel))
		require.NoError(t, err, rel)
		info := im.infos[pkg.Path()]
		if info == nil {
			continue // no file for this platform
		}
		up := usingPackage{path: rel, strategy: isStrategyPackage(pkg)}
		for sel, s := range info.Selections {
			if s.Kind() == types.MethodVal && isNode(s.Recv()) {
				up.uses = append(up.uses, nodeUse{im.fset.Position(sel.Sel.Pos()), sel.Sel.Name})
			}
		}
		sort.Slice(up.uses, func(i, j int) bool { return up.uses[i].pos.String() < up.uses[j].pos.String() })
		out = append(out, up)
	}
	return out
}

// isNode reports whether t is ha.Node or a pointer to it.
func isNode(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "Node" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == surfaceHA
}

// isStrategyPackage reports whether pkg declares a type with the method
// Hooks(*ha.Node) ha.Hooks: an ha.Strategy.
func isStrategyPackage(pkg *types.Package) bool {
	for _, name := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		ms := types.NewMethodSet(types.NewPointer(tn.Type()))
		for i := range ms.Len() {
			f := ms.At(i).Obj()
			sig, ok := f.Type().(*types.Signature)
			if f.Name() == "Hooks" && ok && sig.Params().Len() == 1 && isNode(sig.Params().At(0).Type()) {
				return true
			}
		}
	}
	return false
}

// sourceImporter type-checks the module's packages from their sources
// and stands in an empty package for any other.
type sourceImporter struct {
	root  string
	fset  *token.FileSet
	pkgs  map[string]*types.Package
	infos map[string]*types.Info
}

var versionElem = regexp.MustCompile(`^v[0-9]+$`)

func (im *sourceImporter) Import(p string) (*types.Package, error) {
	if pkg, ok := im.pkgs[p]; ok {
		return pkg, nil
	}
	rel, ok := strings.CutPrefix(p, surfaceModule+"/")
	if !ok {
		name := path.Base(p)
		if versionElem.MatchString(name) {
			name = path.Base(path.Dir(p))
		}
		pkg := types.NewPackage(p, strings.TrimPrefix(name, "go-"))
		pkg.MarkComplete()
		im.pkgs[p] = pkg
		return pkg, nil
	}
	dir := filepath.Join(im.root, filepath.FromSlash(rel))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(im.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	// Errors are expected (the packages outside the module are empty) and
	// ignored: they leave only their own expressions unresolved.
	conf := types.Config{Importer: im, Error: func(error) {}}
	pkg, _ := conf.Check(p, im.fset, files, info)
	im.pkgs[p] = pkg
	if len(files) > 0 {
		im.infos[p] = info
	}
	return pkg, nil
}
