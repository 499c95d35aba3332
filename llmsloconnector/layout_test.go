// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package llmsloconnector

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxMethodFiles is the most files one type's methods may be spread over:
// a reader finds a type's behaviour in one place, or two or three.
const maxMethodFiles = 3

// methodFiles maps each named type of the packages under root (root's own
// and those in its subdirectories, tests left out: their helpers are not
// what a reader follows) to the files that declare its methods, by
// package directory and type: "llmSLOConnector", "internal/series/Store".
func methodFiles(fsys fs.FS) (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return err
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			key := path.Join(path.Dir(name), receiverType(fn.Recv.List[0].Type))
			if files := out[key]; len(files) == 0 || files[len(files)-1] != name {
				out[key] = append(files, name)
			}
		}
		return nil
	})
	for _, files := range out {
		sort.Strings(files)
	}
	return out, err
}

// receiverType is the name of a receiver's type: T, *T, T[P] or *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

// spread are the types whose methods are in more than maxMethodFiles files.
func spread(files map[string][]string) []string {
	var out []string
	for typ, fs := range files {
		if len(fs) > maxMethodFiles {
			out = append(out, typ+": "+strings.Join(fs, ", "))
		}
	}
	sort.Strings(out)
	return out
}

// TestMethodsInFewFiles: no type of the connector or of its internal
// packages has its methods in more than three files.
func TestMethodsInFewFiles(t *testing.T) {
	files, err := methodFiles(os.DirFS("."))
	require.NoError(t, err)
	require.Contains(t, files, "llmSLOConnector", "the connector's own package is read")
	require.Contains(t, files, "internal/series/Store", "its internal packages are read")
	assert.Empty(t, spread(files), "types whose methods are spread over more than %d files", maxMethodFiles)
}

// TestMethodFilesCounts: the check counts files per type and package,
// receivers in every form, and finds a type spread too far.
func TestMethodFilesCounts(t *testing.T) {
	fsys := fstest.MapFS{
		"a.go":       {Data: []byte("package p\ntype T struct{}\nfunc (T) a() {}\nfunc (*T) b() {}\n")},
		"b.go":       {Data: []byte("package p\nfunc (t *T) c() {}\ntype G[P any] struct{}\nfunc (G[P]) d() {}\n")},
		"c.go":       {Data: []byte("package p\nfunc (T) e() {}\nfunc (*G[P]) f() {}\nfunc free() {}\n")},
		"d.go":       {Data: []byte("package p\nfunc (T) g() {}\n")},
		"d_test.go":  {Data: []byte("package p\nfunc (T) h() {}\nfunc (G[P]) i() {}\n")},
		"sub/x.go":   {Data: []byte("package q\ntype T struct{}\nfunc (T) a() {}\n")},
		"notes.txt":  {Data: []byte("func (T) z() {}")},
		"sub/y.go":   {Data: []byte("package q\nfunc (*T) b() {}\n")},
		"sub/z.go":   {Data: []byte("package q\nfunc (T) c() {}\n")},
		"sub/w_test": {Data: []byte("package q\n")},
	}
	files, err := methodFiles(fsys)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{
		"T":     {"a.go", "b.go", "c.go", "d.go"},
		"G":     {"b.go", "c.go"},
		"sub/T": {"sub/x.go", "sub/y.go", "sub/z.go"},
	}, files)
	assert.Equal(t, []string{"T: a.go, b.go, c.go, d.go"}, spread(files))
}

// TestConnectorHoldsItsPath: the steps a reader follows from a batch to
// the metrics sent are declared in connector.go.
func TestConnectorHoldsItsPath(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "connector.go", nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	declared := map[string]bool{}
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok {
			declared[fn.Name.Name] = true
		}
	}
	for _, step := range []string{"newConnector", "Start", "Shutdown", "ConsumeTraces", "consumeSpan", "flush", "collect"} {
		assert.True(t, declared[step], "connector.go declares %s", step)
	}
}
