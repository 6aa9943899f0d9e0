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

package werfrender

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeProject lays files into a fresh project directory.
func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRenderImplementsWerfFunctions(t *testing.T) {
	const meta = "project: p\nconfigVersion: 1\n---\n"
	tests := []struct {
		name    string
		files   map[string]string
		env     map[string]string
		overlay map[string]string
		want    string // substring of the output
		wantErr string // substring of the error
	}{
		{
			name: "tpl renders a file with the root context and set changes it for later files",
			files: map[string]string{
				"werf.yaml": meta + `{{ tpl (.Files.Get "a.yaml") $ }}{{ tpl (.Files.Get "b.yaml") $ }}`,
				"a.yaml":    `{{- $_ := set . "Answer" "42" }}`,
				"b.yaml":    `answer: {{ .Answer }}`,
			},
			want: "answer: 42",
		},
		{
			name: "include sees defines from .werf/**/*.tmpl",
			files: map[string]string{
				"werf.yaml":              meta + `x: {{ include "hello" "world" }}`,
				".werf/defines/x/h.tmpl": `{{- define "hello" -}}hello {{ . }}{{- end -}}`,
			},
			want: "x: hello world",
		},
		{
			name: "Glob matches brace alternatives within one directory level",
			files: map[string]string{
				"werf.yaml":                   meta + `{{ range $p, $_ := .Files.Glob "images/*/{Dockerfile,werf.inc.yaml}" }}{{ $p }};{{ end }}`,
				"images/a/werf.inc.yaml":      "",
				"images/b/Dockerfile":         "",
				"images/c/other.yaml":         "",
				"images/d/deep/werf.inc.yaml": "",
			},
			want: "images/a/werf.inc.yaml;images/b/Dockerfile;",
		},
		{
			name: "Files.Exists sees overlay files laid by CI",
			files: map[string]string{
				"werf.yaml": meta + `has: {{ .Files.Exists "base_images.yml" }} {{ .Files.Exists "nope" }}`,
			},
			overlay: map[string]string{"base_images.yml": "x: y"},
			want:    "has: true false",
		},
		{
			name: "env reads a variable werf-giterminism.yaml allows by pattern",
			files: map[string]string{
				"werf.yaml":             meta + `ref: {{ env "CI_COMMIT_REF_NAME" }}`,
				"werf-giterminism.yaml": "giterminismConfigVersion: 1\nconfig:\n  goTemplateRendering:\n    allowEnvVariables: [/CI_.+/]\n",
			},
			env:  map[string]string{"CI_COMMIT_REF_NAME": "v1.2.3"},
			want: "ref: v1.2.3",
		},
		{
			name: "env falls back to its default when the variable is unset",
			files: map[string]string{
				"werf.yaml":             meta + `tag: {{ env "TAG" "dev" }}`,
				"werf-giterminism.yaml": "giterminismConfigVersion: 1\nconfig:\n  goTemplateRendering:\n    allowEnvVariables: [TAG]\n",
			},
			want: "tag: dev",
		},
		{
			name: "env refuses a variable werf-giterminism.yaml does not allow",
			files: map[string]string{
				"werf.yaml":             meta + `home: {{ env "HOME" }}`,
				"werf-giterminism.yaml": "giterminismConfigVersion: 1\nconfig:\n  goTemplateRendering:\n    allowEnvVariables: [/CI_.+/]\n",
			},
			env:     map[string]string{"HOME": "/root"},
			wantErr: `env "HOME": not allowed`,
		},
		{
			name:    "Files.Get fails on a missing file as werf does",
			files:   map[string]string{"werf.yaml": meta + `{{ .Files.Get "missing.yaml" }}`},
			wantErr: `.Files.Get "missing.yaml"`,
		},
		{
			name:    "expandenv is not available",
			files:   map[string]string{"werf.yaml": meta + `{{ expandenv "$HOME" }}`},
			wantErr: `"expandenv" not defined`,
		},
		{
			name:    "fail stops the render with its message",
			files:   map[string]string{"werf.yaml": meta + `{{ fail "base_images.yml is missing" }}`},
			wantErr: "base_images.yml is missing",
		},
		{
			name: "fromYaml parses a document",
			files: map[string]string{
				"werf.yaml": meta + `v: {{ (.Files.Get "v.yaml" | fromYaml).version }}`,
				"v.yaml":    "version: 4.1.7\n",
			},
			want: "v: 4.1.7",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeProject(t, tt.files)
			out, err := Render(Options{Root: dir, Env: tt.env, Overlay: tt.overlay})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v (output %q)", tt.wantErr, err, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tt.want) {
				t.Fatalf("output %q does not contain %q", out, tt.want)
			}
		})
	}
}

func TestParseRejectsWhatWerfRejects(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		wantErr string
	}{
		{"unknown image directive", "project: p\nconfigVersion: 1\n---\nimage: a\nfrom: x\nincludePath: [a]\n", "includePath"},
		{"two images glued without a separator", "project: p\nconfigVersion: 1\n---\nimage: a\nfrom: x\nimage: b\n", "already defined"},
		{"the same image twice", "project: p\nconfigVersion: 1\n---\nimage: a\nfrom: x\n---\nimage: a\nfrom: y\n", "twice"},
		{"no meta document", "image: a\nfrom: x\n", "no meta document"},
		{"a document that is neither meta nor image", "project: p\nconfigVersion: 1\n---\nfoo: bar\n", "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestCheckSecretsRefusesWhatGiterminismDoesNotAllow(t *testing.T) {
	cfg := &Config{Images: []Image{{Image: "a", Secrets: []Secret{{ID: "GOPROXY", Value: "https://proxy.example"}}}}}
	refuse := Giterminism{SecretValueIDs: map[string]bool{}}
	if err := refuse.CheckSecrets(cfg); err == nil || !strings.Contains(err.Error(), "allowValueIds") {
		t.Errorf("a value secret werf-giterminism.yaml does not list: %v, want a refusal naming allowValueIds", err)
	}
	allow := Giterminism{SecretValueIDs: map[string]bool{"GOPROXY": true}}
	if err := allow.CheckSecrets(cfg); err != nil {
		t.Errorf("an allowed value secret: %v", err)
	}
	env := &Config{Images: []Image{{Image: "b", Secrets: []Secret{{Env: "TOKEN"}}}}}
	if err := allow.CheckSecrets(env); err == nil || !strings.Contains(err.Error(), "allowEnvVariables") {
		t.Errorf("an env secret werf-giterminism.yaml does not list: %v", err)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "c.go", true},
		{"**/testdata", "pkg/x/testdata", true},
		{"templates", "templates", true},
		{"images/*/werf.inc.yaml", "images/a/b/werf.inc.yaml", false},
		{".werf/**/*.tmpl", ".werf/defines/a.tmpl", true},
		{".werf/**/*.tmpl", ".werf/a.tmpl", true},
		{"images/*/{Dockerfile,werf.inc.yaml}", "images/a/Dockerfile", true},
		{"images/*/{Dockerfile,werf.inc.yaml}", "images/a/go.mod", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}
