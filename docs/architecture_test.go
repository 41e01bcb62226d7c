// The checks of architecture.md against the tree: its package map names
// every package there is and no other, and the workshop's rule holds.
package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/evosignal/evosignal"

// packages returns the module's Go package directories, relative to the
// module root, but the commands' mains (cmd/) and the examples; by
// directory, whether any of its non-test files is Go.
func packages(tb testing.TB) map[string][]string {
	tb.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case strings.HasPrefix(d.Name(), ".") && rel != ".", d.Name() == "testdata", d.Name() == "node_modules", rel == "cmd", rel == "examples", rel == "docs":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			pkgs[filepath.ToSlash(filepath.Dir(rel))] = append(pkgs[filepath.ToSlash(filepath.Dir(rel))], path)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return pkgs
}

// mapped returns the packages architecture.md's package map names: the
// paths in backquotes in the first column of its tables' rows.
func mapped(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		tb.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Package map")
	end := strings.Index(doc, "## Where to add")
	if start < 0 || end < start {
		tb.Fatal(`architecture.md has no "## Package map" section before "## Where to add"`)
	}
	path := regexp.MustCompile("`((?:agent|schema|queries|internal|scripts)(?:/[a-z0-9-]+)*)`")
	var names []string
	for _, line := range strings.Split(doc[start:end], "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 3 || !strings.HasPrefix(line, "|") {
			continue
		}
		for _, m := range path.FindAllStringSubmatch(cols[1], -1) {
			names = append(names, m[1])
		}
	}
	return names
}

func TestPackageMapMatchesTree(t *testing.T) {
	pkgs := packages(t)
	names := mapped(t)
	for _, n := range names {
		if pkgs[n] == nil {
			t.Errorf("architecture.md maps %s, which is not a package of the tree", n)
		}
	}
	for p := range pkgs {
		if p != "." && !slices.Contains(names, p) {
			t.Errorf("package %s is not in architecture.md's package map", p)
		}
	}
}

// workshopUsers are the product packages that may import the workshop:
// the commands that run its tools.
var workshopUsers = []string{"internal/app/agentsim", "internal/app/bench", "internal/app/inferbench"}

// TestProductDoesNotImportWorkshop: no product package imports
// internal/workshop (tests may, and the workshop's own commands).
func TestProductDoesNotImportWorkshop(t *testing.T) {
	fset := token.NewFileSet()
	for dir, files := range packages(t) {
		if strings.HasPrefix(dir, "internal/workshop/") || slices.Contains(workshopUsers, dir) {
			continue
		}
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(p, module+"/internal/workshop/") {
					t.Errorf("%s imports %s: product packages do not import the workshop", path, p)
				}
			}
		}
	}
	// And the commands under cmd/ neither.
	mains, _ := filepath.Glob("../cmd/*/*.go")
	for _, path := range mains {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, module+"/internal/workshop/") {
				t.Errorf("%s imports %s: product packages do not import the workshop", path, p)
			}
		}
	}
}
