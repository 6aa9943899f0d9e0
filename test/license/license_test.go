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

// Package license checks what Deckhouse's linter (dmt lint, rule
// module/license) checks, so CI holds it without dmt: every source file the
// rule looks at starts with the Apache 2.0 header of Flant JSC.
//
// The selection mirrors dmt's pkg/linters/module/rules/license.go and
// license_parser.go: paths matching fileToCheck and not fileToSkip, non-empty,
// of a type dmt parses (Go; shell, Python, Lua; an extensionless file with a
// sh/bash/python shebang), not marked as generated.
package license

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const repoRoot = "../.."

var (
	fileToCheck = regexp.MustCompile(`\.go$|/[^.]+$|\.sh$|\.lua$|\.py$`)
	fileToSkip  = regexp.MustCompile(`geohash.lua$|\.github/.*|Dockerfile$|Makefile$|/docs/documentation/|/docs/site/|bashrc$|inputrc$` +
		`|modules_menu_skip$|LICENSE$|tools/spelling/.+|/lib/python/|charts/helm_lib|PROJECT|pb.go$` +
		`|zz_generated.go$|zz_generated.*\.go$|zz_generated.*\.yaml$`)
	generated = regexp.MustCompile(`generated[\s\S]{0,200}?do\s*not\s*(edit|modify)`)

	// The header as dmt normalizes it: comment markers and indentation gone.
	header = regexp.MustCompile(`(?m)^Copyright 20[0-9]{2} Flant JSC.*\n\n` + regexp.QuoteMeta(`Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.`))
)

// Directories .gitignore keeps out of the repository (build output, caches).
var untracked = map[string]bool{".git": true, "bin": true, ".cache": true}

// commentPrefix returns the line comment marker dmt reads in the file, "//"
// for Go (which also accepts /* */), or "" when dmt does not check the file.
func commentPrefix(rel string, head []byte) string {
	switch strings.ToLower(filepath.Ext(rel)) {
	case ".go":
		return "//"
	case ".sh", ".bash", ".py":
		return "#"
	case ".lua":
		return "--"
	case "":
		start := string(head[:min(len(head), 100)])
		if strings.HasPrefix(strings.TrimSpace(start), "#!/") &&
			(strings.Contains(start, "sh") || strings.Contains(start, "python")) {
			return "#"
		}
	}
	return ""
}

// normalized strips comment markers and indentation from the first 2048
// bytes, as dmt does before matching the header.
func normalized(head []byte, prefix string) string {
	var lines []string
	for _, l := range strings.Split(string(head), "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{prefix, "/*", "*/", "*"} {
			l = strings.TrimPrefix(l, p)
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	return strings.Join(lines, "\n")
}

func TestEveryCheckedFileHasTheLicenseHeader(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			// A leading _ is a test's scratch folder inside the module
			// (test/clients builds its Go recipe there), which the go tool
			// ignores too; it comes and goes while this test walks.
			if untracked[d.Name()] || strings.HasPrefix(d.Name(), "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !fileToCheck.MatchString(rel) || fileToSkip.MatchString(rel) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			return err
		}
		head := data[:min(len(data), 2048)]
		prefix := commentPrefix(rel, head)
		if prefix == "" || generated.Match([]byte(strings.ToLower(string(head)))) {
			return nil
		}
		checked++
		if !header.MatchString(normalized(head, prefix)) {
			t.Errorf("%s: no Apache 2.0 license header of Flant JSC (dmt module/license); run the header script from the lead's notes or copy the header of another file", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: the selection broke", checked)
	}
}
