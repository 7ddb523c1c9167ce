package ha_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// haImport is the import path of the common runtime: every package that
// imports it (and ha itself) is protocol code, where a run must be a pure
// function of (experiment, seed): no wall clock, sleeps, goroutines or
// global randomness. A new strategy package is checked without being
// listed anywhere.
const haImport = "github.com/streamha/streamha/ha"

// runtimeDirs are the packages that import ha to drive nodes with real
// time and I/O: the two real runtimes and the CLI. (The sweep runner,
// package sweep, runs points on a pool of goroutines; it does not import ha.)
var runtimeDirs = []string{"cluster", "inproc", filepath.Join("cmd", "streamha")}

var forbiddenTime = map[string]bool{
	"Now": true, "Sleep": true, "After": true, "AfterFunc": true, "Tick": true,
	"NewTimer": true, "NewTicker": true, "Since": true, "Until": true,
}

var allowedRandV2 = map[string]bool{
	"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true,
	"Rand": true, "PCG": true, "ChaCha8": true, "Zipf": true, "Source": true,
}

// checkFile returns the protocol violations in one Go source file.
func checkFile(t *testing.T, fset *token.FileSet, path string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	require.NoError(t, err)
	names := map[string]string{} // local name -> import path
	var bad []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		local := filepath.Base(p)
		if p == "math/rand/v2" {
			local = "rand"
		}
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = p
		if p == "math/rand" {
			bad = append(bad, fset.Position(imp.Pos()).String()+": imports math/rand (use the node's seeded source)")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			bad = append(bad, fset.Position(x.Pos()).String()+": starts a goroutine")
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch names[id.Name] {
			case "time":
				if forbiddenTime[x.Sel.Name] {
					bad = append(bad, fset.Position(x.Pos()).String()+": uses time."+x.Sel.Name)
				}
			case "math/rand/v2":
				if !allowedRandV2[x.Sel.Name] {
					bad = append(bad, fset.Position(x.Pos()).String()+": uses the global rand."+x.Sel.Name)
				}
			}
		}
		return true
	})
	return bad
}

func TestProtocolCodeIsPure(t *testing.T) {
	dirs := protocolDirs(t, "..")
	for _, want := range []string{"ha", "strategies", "activestandby", "passivestandby", "upstreambackup", "sim"} {
		require.Contains(t, dirs, want, "the walk finds every package that imports ha")
	}
	fset := token.NewFileSet()
	var bad []string
	files := 0
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		for _, path := range dirs[dir] {
			files++
			bad = append(bad, checkFile(t, fset, path, nil)...)
		}
	}
	require.Greater(t, files, 10, "the walk found the protocol sources")
	require.Empty(t, bad, "protocol code must be deterministic")
}

// protocolDirs maps every directory under root whose package is ha or
// imports ha, except runtimeDirs and testdata, to its non-test Go files.
func protocolDirs(t *testing.T, root string) map[string][]string {
	t.Helper()
	files := map[string][]string{}
	imports := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if slices.Contains(runtimeDirs, rel) || d.Name() == "testdata" || rel != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.Dir(rel)
		files[dir] = append(files[dir], path)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == haImport {
				imports[dir] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	for dir := range files {
		if dir != "ha" && !imports[dir] {
			delete(files, dir)
		}
	}
	return files
}

// TestPurityCheckCatchesViolations proves the checker is not vacuous.
func TestPurityCheckCatchesViolations(t *testing.T) {
	cases := []struct {
		name, src string
		want      string
	}{
		{"wall clock", "package p\nimport \"time\"\nvar x = time.Now()", "time.Now"},
		{"sleep", "package p\nimport \"time\"\nfunc f() { time.Sleep(1) }", "time.Sleep"},
		{"after", "package p\nimport \"time\"\nvar c = time.After(1)", "time.After"},
		{"goroutine", "package p\nfunc f() { go f() }", "goroutine"},
		{"global rand v1", "package p\nimport \"math/rand\"\nvar x = rand.Int()", "math/rand"},
		{"global rand v2", "package p\nimport \"math/rand/v2\"\nvar x = rand.IntN(3)", "rand.IntN"},
		{"renamed time", "package p\nimport tm \"time\"\nvar x = tm.Now()", "time.Now"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := checkFile(t, token.NewFileSet(), "x.go", tc.src)
			require.NotEmpty(t, bad)
			require.Contains(t, strings.Join(bad, "\n"), tc.want)
		})
	}
	ok := "package p\nimport (\"time\"; \"math/rand/v2\")\nvar d = time.Second\nvar r = rand.New(rand.NewPCG(1, 2))"
	require.Empty(t, checkFile(t, token.NewFileSet(), "ok.go", ok))
}
