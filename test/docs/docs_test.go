/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package docs_test checks the documentation a Deckhouse user reads: every
// page has front matter and a Russian twin, Cyrillic stays in Russian files,
// and every field of the CRDs and module settings is described in English and
// in Russian. The Deckhouse documentation site builds from exactly these files,
// so a gap here is a gap on the published site.
package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// repoRoot is the directory holding go.mod, found upwards from the test's
// working directory (go test runs in the package directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("get working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above the test directory")
		}
		dir = parent
	}
}

// docPages lists the Markdown pages under docs/, relative to the repo root.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	var pages []string
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk docs/: %v", err)
	}
	if len(pages) == 0 {
		t.Fatalf("docs/ holds no Markdown pages")
	}
	sort.Strings(pages)
	return pages
}

// frontMatter returns the YAML between the leading "---" lines of a page.
func frontMatter(content []byte) (map[string]any, error) {
	text := strings.ReplaceAll(string(content), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, fmt.Errorf("does not start with a front matter line \"---\"")
	}
	end := strings.Index(text[4:], "\n---\n")
	if end < 0 {
		return nil, fmt.Errorf("front matter is not closed by a \"---\" line")
	}
	var fm map[string]any
	if err := yaml.Unmarshal([]byte(text[4:4+end]), &fm); err != nil {
		return nil, fmt.Errorf("front matter is not YAML: %w", err)
	}
	return fm, nil
}

// userPages are the pages docs/ may hold. docs/ is what Deckhouse's
// documentation site publishes for the module (and the bundle and the
// release image carry): pages for the admins and users who run it. Pages
// for its developers (how it is built, what its benchmarks measured) live
// in dev/docs, beside the sources, as Deckhouse keeps its own developer
// notes out of the published pages (modules/<module>/docs/internal).
var userPages = map[string]bool{
	"README": true, "CONFIGURATION": true, "CR": true, "EXAMPLES": true, "FAQ": true, "ADMIN_GUIDE": true, "USAGE": true,
}

func TestDocsHoldOnlyPagesForAdminsAndUsers(t *testing.T) {
	root := repoRoot(t)
	for _, page := range docPages(t, root) {
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(page, "docs/"), ".md"), ".ru")
		if !userPages[name] {
			t.Errorf("%s is not a page for admins or users (%v): a developer page belongs in dev/docs", page, slices.Sorted(maps.Keys(userPages)))
		}
	}
}

func TestEveryPageHasFrontMatterWithTitleAndDescription(t *testing.T) {
	root := repoRoot(t)
	for _, page := range docPages(t, root) {
		content, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatalf("read %s: %v", page, err)
		}
		fm, err := frontMatter(content)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		for _, key := range []string{"title", "description"} {
			if v, _ := fm[key].(string); strings.TrimSpace(v) == "" {
				t.Errorf("%s: front matter has no %q", page, key)
			}
		}
	}
}

// twinOf maps X.md to X.ru.md and back.
func twinOf(page string) string {
	if strings.HasSuffix(page, ".ru.md") {
		return strings.TrimSuffix(page, ".ru.md") + ".md"
	}
	return strings.TrimSuffix(page, ".md") + ".ru.md"
}

func TestEveryPageHasItsTwinInTheOtherLanguage(t *testing.T) {
	root := repoRoot(t)
	pages := docPages(t, root)
	have := map[string]bool{}
	for _, p := range pages {
		have[p] = true
	}
	for _, p := range pages {
		if !have[twinOf(p)] {
			lang := "Russian"
			if strings.HasSuffix(p, ".ru.md") {
				lang = "English"
			}
			t.Errorf("%s has no %s twin %s", p, lang, twinOf(p))
		}
	}
}

// TestTwinPagesHaveTheSameSections catches a page that was extended in one
// language only: both twins must have the same number of headings per level.
func TestTwinPagesHaveTheSameSections(t *testing.T) {
	root := repoRoot(t)
	for _, p := range docPages(t, root) {
		if strings.HasSuffix(p, ".ru.md") {
			continue
		}
		en, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		ru, err := os.ReadFile(filepath.Join(root, twinOf(p)))
		if err != nil {
			continue // reported by the twin test
		}
		if e, r := headingLevels(en), headingLevels(ru); e != r {
			t.Errorf("%s and %s differ in their headings: %s vs %s", p, twinOf(p), e, r)
		}
		if e, r := countCodeBlocks(en), countCodeBlocks(ru); e != r {
			t.Errorf("%s has %d code blocks, %s has %d: examples must be the same in both languages", p, e, twinOf(p), r)
		}
	}
}

// headingLevels is the sequence of heading levels outside code blocks, e.g. "1 2 3 3 2".
func headingLevels(content []byte) string {
	var levels []string
	inCode := false
	sc := bufio.NewScanner(bytes.NewReader(content))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		n := len(line) - len(strings.TrimLeft(line, "#"))
		levels = append(levels, fmt.Sprint(n))
	}
	return strings.Join(levels, " ")
}

var fence = regexp.MustCompile("(?m)^\\s*```")

func countCodeBlocks(content []byte) int { return len(fence.FindAll(content, -1)) / 2 }

func isCyrillic(r rune) bool { return unicode.Is(unicode.Cyrillic, r) }

// cyrillicAllowed says whether a tracked file may hold Russian text at all.
func cyrillicAllowed(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, ".ru.md") || strings.HasPrefix(base, "doc-ru-") ||
		(strings.HasPrefix(path, "CHANGELOG/") && strings.HasSuffix(base, ".ru.yml"))
}

// Every release's changelog (CHANGELOG/<tag>.yml, the release image's
// changelog.yaml) is a YAML map with its Russian twin CHANGELOG/<tag>.ru.yml,
// which has as many entries under each section.
func TestEveryChangelogHasItsRussianTwin(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "CHANGELOG", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".ru.yml") {
			if _, err := os.Stat(strings.TrimSuffix(f, ".ru.yml") + ".yml"); err != nil {
				t.Errorf("%s has no English original", f)
			}
			continue
		}
		n++
		en, ru := changelogSections(t, f), changelogSections(t, strings.TrimSuffix(f, ".yml")+".ru.yml")
		if fmt.Sprint(en) != fmt.Sprint(ru) {
			t.Errorf("%s: entries per section %v, its Russian twin %v", f, en, ru)
		}
	}
	if n == 0 {
		t.Fatal("no CHANGELOG/<tag>.yml")
	}
}

// changelogSections are the numbers of entries of a changelog's sections,
// in the order of the file.
func changelogSections(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yamlv3.MappingNode {
		t.Fatalf("%s is not a YAML map: %v", path, err)
	}
	var out []int
	m := doc.Content[0]
	for i := 1; i < len(m.Content); i += 2 {
		if m.Content[i].Kind != yamlv3.SequenceNode || len(m.Content[i].Content) == 0 {
			t.Errorf("%s: section %s is not a list of entries", path, m.Content[i-1].Value)
		}
		out = append(out, len(m.Content[i].Content))
	}
	return out
}

func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to list the tracked files (install the Debian package git): %v", err)
	}
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatalf("git ls-files listed nothing in %s", root)
	}
	return files
}

// isBinary follows git's heuristic: a NUL byte in the first 8000 bytes.
func isBinary(content []byte) bool {
	head := content
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(content)
}

func TestNoCyrillicOutsideRussianFiles(t *testing.T) {
	root := repoRoot(t)
	for _, f := range trackedFiles(t, root) {
		if cyrillicAllowed(f) {
			continue
		}
		content, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet committed
		}
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		if isBinary(content) {
			continue
		}
		if f == "module.yaml" {
			for _, msg := range cyrillicInModuleYAML(content) {
				t.Errorf("module.yaml: %s", msg)
			}
			continue
		}
		for i, line := range strings.Split(string(content), "\n") {
			if strings.IndexFunc(line, isCyrillic) >= 0 && !localizedAnnotation.MatchString(line) {
				t.Errorf("%s:%d: Cyrillic outside a Russian file (*.ru.md, doc-ru-*): %q", f, i+1, line)
			}
		}
	}
}

// localizedAnnotation is the one line outside a Russian file that may be
// Russian: the title and description Deckhouse's role model requires on
// every capability (ru.meta.deckhouse.io/title and /description), which the
// console shows to whoever grants access. dmt's no-cyrillic rule skips the
// same lines (deckhouse/dmt pkg/linters/no-cyrillic/rules/files.go,
// localizedAnnotationRe).
var localizedAnnotation = regexp.MustCompile(`^\s*ru\.meta\.deckhouse\.io/(title|description): `)

func TestCyrillicCheckAllowsOnlyTheLocalizedAnnotations(t *testing.T) {
	for line, allowed := range map[string]bool{
		"    ru.meta.deckhouse.io/title: \"\u041c\u043e\u0434\u0443\u043b\u044c\"":          true,
		"    ru.meta.deckhouse.io/description: \"\u041c\u043e\u0434\u0443\u043b\u044c\"":    true,
		"    en.meta.deckhouse.io/title: \"\u041c\u043e\u0434\u0443\u043b\u044c\"":          false,
		"    name: \"\u041c\u043e\u0434\u0443\u043b\u044c\" # ru.meta.deckhouse.io/title: ": false,
	} {
		if got := localizedAnnotation.MatchString(line); got != allowed {
			t.Errorf("%q: allowed=%v, want %v", line, got, allowed)
		}
	}
}

// cyrillicInModuleYAML allows Russian only in the value of descriptions.ru,
// the one place module.yaml is meant to hold it.
func cyrillicInModuleYAML(content []byte) []string {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(content, &doc); err != nil {
		return []string{fmt.Sprintf("not YAML: %v", err)}
	}
	var problems []string
	var walk func(n *yamlv3.Node, path string, allowed bool)
	walk = func(n *yamlv3.Node, path string, allowed bool) {
		for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
			if strings.IndexFunc(c, isCyrillic) >= 0 {
				problems = append(problems, fmt.Sprintf("line %d: Cyrillic in a comment", n.Line))
			}
		}
		if n.Kind == yamlv3.ScalarNode && !allowed && strings.IndexFunc(n.Value, isCyrillic) >= 0 {
			problems = append(problems, fmt.Sprintf("line %d: Cyrillic in %s (only descriptions.ru may be Russian)", n.Line, path))
		}
		if n.Kind == yamlv3.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key, val := n.Content[i], n.Content[i+1]
				p := strings.TrimPrefix(path+"."+key.Value, ".")
				walk(key, p, false)
				walk(val, p, p == "descriptions.ru")
			}
			return
		}
		for _, c := range n.Content {
			walk(c, path, allowed)
		}
	}
	walk(&doc, "", false)
	return problems
}

// schemaPair is an English schema and its Russian description twin.
type schemaPair struct {
	name      string // what the messages call it
	enFile    string
	ruFile    string
	enSchema  map[string]any
	ruSchema  map[string]any
	skipPaths map[string]bool
}

func readYAMLMap(t *testing.T, root, file string) map[string]any {
	t.Helper()
	content, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(content, &m); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return m
}

// crdVersionSchemas maps version name to its openAPIV3Schema.
func crdVersionSchemas(t *testing.T, file string, doc map[string]any) map[string]map[string]any {
	t.Helper()
	spec, _ := doc["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	if len(versions) == 0 {
		t.Fatalf("%s: no spec.versions", file)
	}
	out := map[string]map[string]any{}
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		schema, _ := vm["schema"].(map[string]any)
		oas, _ := schema["openAPIV3Schema"].(map[string]any)
		if name == "" || oas == nil {
			t.Fatalf("%s: a version without a name or schema.openAPIV3Schema", file)
		}
		out[name] = oas
	}
	return out
}

// rootFieldsWithoutDocs are the standard object fields every CRD has; their
// meaning is Kubernetes', not ours, and `kubectl explain` shows upstream text.
var rootFieldsWithoutDocs = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

func schemaPairs(t *testing.T, root string) []schemaPair {
	t.Helper()
	var pairs []schemaPair
	for _, crd := range []struct{ en, ru string }{
		{"crds/starrocks.yaml", "crds/doc-ru-starrocks.yaml"},
		{"crds/starrocksclass.yaml", "crds/doc-ru-starrocksclass.yaml"},
		{"crds/starrocksbackup.yaml", "crds/doc-ru-starrocksbackup.yaml"},
	} {
		en := crdVersionSchemas(t, crd.en, readYAMLMap(t, root, crd.en))
		ru := crdVersionSchemas(t, crd.ru, readYAMLMap(t, root, crd.ru))
		for name := range ru {
			if _, ok := en[name]; !ok {
				t.Errorf("%s: version %s does not exist in %s", crd.ru, name, crd.en)
			}
		}
		for name, schema := range en {
			ruSchema, ok := ru[name]
			if !ok {
				t.Errorf("%s: no version %s (the CRD %s has it)", crd.ru, name, crd.en)
				continue
			}
			pairs = append(pairs, schemaPair{
				name:      "version " + name,
				enFile:    crd.en,
				ruFile:    crd.ru,
				enSchema:  schema,
				ruSchema:  ruSchema,
				skipPaths: rootFieldsWithoutDocs,
			})
		}
	}
	pairs = append(pairs, schemaPair{
		name:     "module settings",
		enFile:   "openapi/config-values.yaml",
		ruFile:   "openapi/doc-ru-config-values.yaml",
		enSchema: readYAMLMap(t, root, "openapi/config-values.yaml"),
		ruSchema: readYAMLMap(t, root, "openapi/doc-ru-config-values.yaml"),
	})
	return pairs
}

// twinKeys are the only keys a Russian twin may hold: it carries descriptions
// along the structure of the English schema and nothing else.
var twinKeys = map[string]bool{"description": true, "properties": true, "items": true, "type": true}

// checkPair reports every English field without an English or Russian
// description and every twin path or key the English schema does not have.
func checkPair(p schemaPair) []string {
	var problems []string
	label := func(path string) string {
		if path == "" {
			return "the schema root"
		}
		return "field " + path
	}
	var walk func(en, ru map[string]any, path string, isField bool)
	walk = func(en, ru map[string]any, path string, isField bool) {
		enDesc, _ := en["description"].(string)
		if isField && strings.TrimSpace(enDesc) == "" {
			problems = append(problems, fmt.Sprintf("%s (%s): %s has no English description", p.enFile, p.name, label(path)))
		}
		if strings.TrimSpace(enDesc) != "" || isField {
			ruDesc, _ := ru["description"].(string)
			switch {
			case ru == nil || strings.TrimSpace(ruDesc) == "":
				problems = append(problems, fmt.Sprintf("%s (%s): %s has no Russian description", p.ruFile, p.name, label(path)))
			case strings.IndexFunc(ruDesc, isCyrillic) < 0:
				problems = append(problems, fmt.Sprintf("%s (%s): the Russian description of %s has no Russian text: %q", p.ruFile, p.name, label(path), ruDesc))
			}
		}
		for key := range ru {
			if !twinKeys[key] {
				problems = append(problems, fmt.Sprintf("%s (%s): %s holds %q; a twin holds only descriptions", p.ruFile, p.name, label(path), key))
			}
		}
		enProps, _ := en["properties"].(map[string]any)
		ruProps, _ := ru["properties"].(map[string]any)
		for name := range ruProps {
			if _, ok := enProps[name]; !ok {
				problems = append(problems, fmt.Sprintf("%s (%s): %s is not in %s", p.ruFile, p.name, label(join(path, name)), p.enFile))
			}
		}
		for name, enChild := range enProps {
			childPath := join(path, name)
			if path == "" && p.skipPaths[name] {
				continue
			}
			enMap, _ := enChild.(map[string]any)
			ruMap, _ := ruProps[name].(map[string]any)
			walk(enMap, ruMap, childPath, true)
		}
		enItems, _ := en["items"].(map[string]any)
		ruItems, _ := ru["items"].(map[string]any)
		if ru["items"] != nil && enItems == nil {
			problems = append(problems, fmt.Sprintf("%s (%s): %s has items, %s does not", p.ruFile, p.name, label(path), p.enFile))
		}
		if enItems != nil {
			// Array items are not fields themselves; their own description
			// needs a twin only when the English schema has one.
			walk(enItems, ruItems, path+"[]", false)
		}
		if ap, ok := en["additionalProperties"].(map[string]any); ok {
			if _, hasProps := ap["properties"]; hasProps {
				walk(ap, nil, path+"{}", false)
			}
		}
	}
	walk(p.enSchema, p.ruSchema, "", false)
	sort.Strings(problems)
	return problems
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func TestEverySchemaFieldIsDescribedInEnglishAndRussian(t *testing.T) {
	root := repoRoot(t)
	for _, p := range schemaPairs(t, root) {
		t.Run(p.enFile+" "+p.name, func(t *testing.T) {
			for _, problem := range checkPair(p) {
				t.Error(problem)
			}
		})
	}
}

// TestTheFieldCheckCatchesGaps proves the schema check is not vacuous: it must
// report a missing Russian description, an English-only text, a twin path the
// schema lacks and a field without an English description.
func TestTheFieldCheckCatchesGaps(t *testing.T) {
	en := map[string]any{
		"properties": map[string]any{
			"a": map[string]any{"description": "A."},
			"b": map[string]any{"description": "B.", "items": map[string]any{"properties": map[string]any{
				"c": map[string]any{"description": "C."},
			}}},
			"d": map[string]any{"type": "string"},
		},
	}
	ru := map[string]any{
		"properties": map[string]any{
			"a": map[string]any{"description": "A in English."},
			"b": map[string]any{"description": "\u0411\u044d.", "items": map[string]any{"properties": map[string]any{}}},
			"d": map[string]any{"description": "\u0414\u044d."},
			"z": map[string]any{"description": "\u041b\u0438\u0448\u043d\u0435\u0435."},
		},
		"x-examples": []any{},
	}
	got := strings.Join(checkPair(schemaPair{name: "t", enFile: "en.yaml", ruFile: "ru.yaml", enSchema: en, ruSchema: ru}), "\n")
	for _, want := range []string{
		"ru.yaml (t): the Russian description of field a has no Russian text",
		"ru.yaml (t): field b[].c has no Russian description",
		"en.yaml (t): field d has no English description",
		"ru.yaml (t): field z is not in en.yaml",
		`ru.yaml (t): the schema root holds "x-examples"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check did not report %q; it reported:\n%s", want, got)
		}
	}
}

func TestCyrillicCheckOfModuleYAMLAllowsOnlyDescriptionsRu(t *testing.T) {
	ok := "name: m\ndescriptions:\n  en: English.\n  ru: \u0420\u0443\u0441\u0441\u043a\u0438\u0439.\n"
	if got := cyrillicInModuleYAML([]byte(ok)); len(got) != 0 {
		t.Errorf("descriptions.ru was reported: %v", got)
	}
	bad := "name: \u043c\n# \u043a\u043e\u043c\u043c\u0435\u043d\u0442\u0430\u0440\u0438\u0439\ndescriptions:\n  en: \u0420\u0443\u0441\u0441\u043a\u0438\u0439.\n"
	if got := cyrillicInModuleYAML([]byte(bad)); len(got) != 3 {
		t.Errorf("want name, comment and descriptions.en reported, got %v", got)
	}
}

var yamlBlock = regexp.MustCompile("(?ms)^```yaml\\n(.*?)^```")

func TestEveryYAMLBlockOfThePagesParses(t *testing.T) {
	root := repoRoot(t)
	for _, p := range docPages(t, root) {
		content, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		for i, m := range yamlBlock.FindAllSubmatch(content, -1) {
			var doc map[string]any
			if err := yaml.Unmarshal(m[1], &doc); err != nil {
				t.Errorf("%s: YAML block %d does not parse: %v", p, i+1, err)
				continue
			}
			if doc["apiVersion"] == nil || doc["kind"] == nil {
				t.Errorf("%s: YAML block %d is not a Kubernetes object (no apiVersion or kind): examples must be applicable as they are", p, i+1)
			}
		}
	}
}

// TestCanonicalExamplesAreOneClassAndOneInstanceOfIt guards the two files
// `make run` applies: the instance must be ordered from the example class.
func TestCanonicalExamplesAreOneClassAndOneInstanceOfIt(t *testing.T) {
	root := repoRoot(t)
	class := readYAMLMap(t, root, "docs/examples/starrocksclass.yaml")
	inst := readYAMLMap(t, root, "docs/examples/starrocks.yaml")
	if class["kind"] != "StarrocksClass" {
		t.Errorf("docs/examples/starrocksclass.yaml: kind is %v, want StarrocksClass", class["kind"])
	}
	if inst["kind"] != "Starrocks" {
		t.Errorf("docs/examples/starrocks.yaml: kind is %v, want Starrocks", inst["kind"])
	}
	className, _ := class["metadata"].(map[string]any)["name"].(string)
	spec, _ := inst["spec"].(map[string]any)
	if ref, _ := spec["starrocksClassName"].(string); ref != className || ref == "" {
		t.Errorf("docs/examples/starrocks.yaml: spec.starrocksClassName %q, want the example class %q", ref, className)
	}
}

// standardTypes are fields whose sub-fields are Kubernetes' own types; the CR
// pages describe them with a link instead of repeating upstream text.
var standardTypes = map[string]bool{
	"spec.nodeAffinity": true, "spec.tolerations": true, "status.conditions": true,
}

// TestCRPagesNameEveryField keeps docs/CR.md and its twin in step with the
// CRDs: each field path must appear on both pages.
func TestCRPagesNameEveryField(t *testing.T) {
	root := repoRoot(t)
	var paths []string
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		props, _ := s["properties"].(map[string]any)
		for name, child := range props {
			p := join(path, name)
			if path == "" && rootFieldsWithoutDocs[name] {
				continue
			}
			if path != "" {
				paths = append(paths, p)
			}
			if standardTypes[p] {
				continue
			}
			c, _ := child.(map[string]any)
			walk(c, p)
			if items, ok := c["items"].(map[string]any); ok {
				walk(items, p+"[]")
			}
		}
	}
	for _, crd := range []string{"crds/starrocks.yaml", "crds/starrocksclass.yaml", "crds/starrocksbackup.yaml"} {
		for _, schema := range crdVersionSchemas(t, crd, readYAMLMap(t, root, crd)) {
			walk(schema, "")
		}
	}
	sort.Strings(paths)
	for _, page := range []string{"docs/CR.md", "docs/CR.ru.md"} {
		content, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatalf("read %s: %v", page, err)
		}
		for _, p := range paths {
			if !bytes.Contains(content, []byte("`"+p+"`")) {
				t.Errorf("%s does not document the CRD field %s", page, p)
			}
		}
	}
}

var relativeLink = regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)

// TestRelativeLinksPointToExistingFiles: the site renders X.md as X.html, so
// a link to X.html needs X.md (or X.ru.md from a Russian page) next to it.
func TestRelativeLinksPointToExistingFiles(t *testing.T) {
	root := repoRoot(t)
	for _, p := range docPages(t, root) {
		content, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		dir := filepath.Dir(filepath.Join(root, p))
		for _, m := range relativeLink.FindAllStringSubmatch(string(content), -1) {
			target := m[1]
			if strings.HasSuffix(target, ".html") {
				target = strings.TrimSuffix(target, ".html") + ".md"
			}
			if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", p, m[1])
			}
		}
	}
}

var (
	numberToken = regexp.MustCompile(`\b\d+\b`)
	// snake_case names are StarRocks settings (streaming_load_max_mb); they
	// stay untranslated, so the Russian text must carry them too.
	snakeToken = regexp.MustCompile(`\b[a-z0-9]+(?:_[a-z0-9]+)+\b`)
)

// TestRussianDescriptionsCarryTheNumbersAndSettingsOfTheEnglish catches a
// twin that was not updated when the English description changed a bound,
// a default or a StarRocks setting name: those tokens must appear in both.
func TestRussianDescriptionsCarryTheNumbersAndSettingsOfTheEnglish(t *testing.T) {
	root := repoRoot(t)
	for _, p := range schemaPairs(t, root) {
		var walk func(en, ru map[string]any, path string)
		walk = func(en, ru map[string]any, path string) {
			enDesc, _ := en["description"].(string)
			ruDesc, _ := ru["description"].(string)
			if enDesc != "" && ruDesc != "" {
				for _, tok := range append(numberToken.FindAllString(enDesc, -1), snakeToken.FindAllString(enDesc, -1)...) {
					if !strings.Contains(ruDesc, tok) {
						where := "the schema root"
						if path != "" {
							where = "field " + path
						}
						t.Errorf("%s (%s): the Russian description of %s lacks %q from the English one; update the translation", p.ruFile, p.name, where, tok)
					}
				}
			}
			enProps, _ := en["properties"].(map[string]any)
			ruProps, _ := ru["properties"].(map[string]any)
			for name, c := range enProps {
				ec, _ := c.(map[string]any)
				rc, _ := ruProps[name].(map[string]any)
				walk(ec, rc, join(path, name))
			}
			if ei, ok := en["items"].(map[string]any); ok {
				ri, _ := ru["items"].(map[string]any)
				walk(ei, ri, path+"[]")
			}
		}
		walk(p.enSchema, p.ruSchema, "")
	}
}
