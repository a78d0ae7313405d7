package main

// The documents name packages, patches, tests and defaults; these tests
// keep those names true as the code moves (issue 35: docs/layout.md and
// third_party/README.md named things that no longer existed, and
// docs/replay.md gave --idle-timeout a default the code no longer had).

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
const root = "../.."

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codeSpans returns the Markdown code spans of doc (`...`).
func codeSpans(doc string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// walkRepo calls fn for every file of the repository outside .git.
func walkRepo(t *testing.T, fn func(rel string, d fs.DirEntry)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel == ".git" {
			return filepath.SkipDir
		}
		fn(filepath.ToSlash(rel), d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// docs/layout.md names every package of edgefence's own (each in a row of
// its own or in its parent's), and every path it lists exists.
func TestLayoutNamesEveryPackageAndOnlyWhatExists(t *testing.T) {
	layout := readDoc(t, "docs/layout.md")
	named := map[string]bool{}
	for _, s := range codeSpans(layout) {
		named[strings.TrimSuffix(s, "/")] = true
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(layout, -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("docs/layout.md lists %s: %v", m[1], err)
		}
	}
	packages := map[string]bool{}
	walkRepo(t, func(rel string, d fs.DirEntry) {
		dir := filepath.ToSlash(filepath.Dir(rel))
		skip := strings.HasPrefix(rel, "third_party/") || strings.Contains("/"+rel, "/testdata/") || strings.HasPrefix(rel, ".")
		if !d.IsDir() && !skip && strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") && dir != "." {
			packages[dir] = true
		}
	})
	if len(packages) < 40 {
		t.Fatalf("found %d packages: not the repository?", len(packages))
	}
	for p := range packages {
		if !named[p] {
			t.Errorf("package %s is not in docs/layout.md", p)
		}
	}
}

// Every package of edgefence's own says what it is in a package comment
// (issue 35: evaluator and ingest had none).
func TestEveryPackageHasADocComment(t *testing.T) {
	documented := map[string]bool{}
	fset := token.NewFileSet()
	walkRepo(t, func(rel string, d fs.DirEntry) {
		if d.IsDir() || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") ||
			strings.HasPrefix(rel, "third_party/") || strings.HasPrefix(rel, ".") || strings.Contains("/"+rel, "/testdata/") {
			return
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		documented[dir] = documented[dir] || f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ") ||
			f.Name.Name == "main" && f.Doc != nil
	})
	for dir, ok := range documented {
		if !ok {
			t.Errorf("package %s has no package comment (\"Package NAME ...\")", dir)
		}
	}
}

// third_party/README.md's table has a row for each patch under
// third_party/patches/mochi, titled as the patch's subject (or its
// beginning), and no other.
func TestPatchTableNamesEachPatch(t *testing.T) {
	readme := readDoc(t, "third_party/README.md")
	_, table, ok := strings.Cut(readme, "| patch | what | why it stays |\n")
	if !ok {
		t.Fatal("third_party/README.md has no patch table")
	}
	rows := map[string]string{}
	for line := range strings.Lines(table) {
		m := regexp.MustCompile(`^\| (\d{4}) ([^|]+) \|`).FindStringSubmatch(line)
		if m != nil {
			rows[m[1]] = m[2]
		} else if !strings.HasPrefix(line, "|") {
			break
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "third_party/patches/mochi/*.patch"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no patches: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		num := filepath.Base(f)[:4]
		// The subject header, unfolded (RFC 5322: continuation lines
		// begin with white space), without git's [PATCH] prefix.
		m := regexp.MustCompile(`(?m)^Subject: (?:\[PATCH[^\]]*\] )?(.*(?:\n[ \t].*)*)`).FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: no Subject", f)
			continue
		}
		subject := strings.Join(strings.Fields(string(m[1])), " ")
		row, ok := rows[num]
		switch {
		case !ok:
			t.Errorf("patch %s (%s) has no row in third_party/README.md", num, subject)
		case row != subject && !strings.HasPrefix(subject, row+" ") && !strings.HasPrefix(subject, row+","):
			t.Errorf("third_party/README.md row %s is %q, the patch's subject %q", num, row, subject)
		}
		delete(rows, num)
	}
	for num, row := range rows {
		t.Errorf("third_party/README.md has a row %s (%s) for no patch", num, row)
	}
}

// Every test, benchmark or fuzz target a document names in code exists
// (by its name; a name followed by * or (, or in a -run pattern, is a
// prefix of some).
func TestDocsNameTestsThatExist(t *testing.T) {
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z0-9_]\w*)\(`)
	walkRepo(t, func(rel string, d fs.DirEntry) {
		if d.IsDir() || !strings.HasSuffix(rel, "_test.go") {
			return
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			funcs[string(m[1])] = true
		}
	})
	all := slices.Collect(maps.Keys(funcs))
	docs, err := filepath.Glob(filepath.Join(root, "docs/*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		docs[i], _ = filepath.Rel(root, docs[i])
	}
	docs = append(docs, "README.md", "third_party/README.md")
	name := regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z0-9_]\w*`)
	for _, doc := range docs {
		for _, span := range codeSpans(readDoc(t, doc)) {
			for _, loc := range name.FindAllStringIndex(span, -1) {
				n := span[loc[0]:loc[1]]
				if funcs[n] {
					continue
				}
				prefix := strings.Contains(span, "-run") || loc[1] < len(span) && strings.ContainsRune("*(", rune(span[loc[1]]))
				if prefix && slices.ContainsFunc(all, func(f string) bool { return strings.HasPrefix(f, n) }) {
					continue
				}
				t.Errorf("%s names %s, which no _test.go declares", doc, n)
			}
		}
	}
}

// A document's synopsis of a command, `edgefence CMD [--flag value] ...`
// in a code block, gives each flag the default the command's --help does.
func TestSynopsesGiveTheHelpsDefaults(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(root, "docs/*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"))
	synopsis := regexp.MustCompile(`(?m)^edgefence ([a-z]+) (\[--(?:.*\\\n)*.*)`)
	flag := regexp.MustCompile(`\[--([a-z-]+) ([^\]\s]+)\]`)
	checked := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range synopsis.FindAllStringSubmatch(string(b), -1) {
			_, out, _ := runCLI(t, m[1], "--help")
			help := helpFlags(t, out)
			for _, f := range flag.FindAllStringSubmatch(m[2], -1) {
				checked++
				def, ok := help[f[1]]
				switch {
				case !ok:
					t.Errorf("%s: edgefence %s [--%s %s]: no such flag in its --help", filepath.Base(doc), m[1], f[1], f[2])
				case !sameDefaults(def, f[2]):
					t.Errorf("%s: edgefence %s [--%s %s]: --help says the default is %q", filepath.Base(doc), m[1], f[1], f[2], def)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no synopsis with defaults found (docs/replay.md has one)")
	}
}

// sameDefaults is sameDefault for comma-separated lists, item by item
// (0 and 0s are one duration).
func sameDefaults(help, doc string) bool {
	h, d := strings.Split(help, ","), strings.Split(doc, ",")
	return slices.EqualFunc(h, d, func(a, b string) bool { return sameDefault(strings.TrimSpace(a), strings.TrimSpace(b)) })
}
