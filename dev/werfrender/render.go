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

// Package werfrender renders the module's werf.yaml the way werf does, so
// tests can check the build configuration without werf or a registry.
//
// werf renders werf.yaml with Go text/template, the Sprig function set and a
// few functions of its own. This package implements the ones the module uses,
// with werf's semantics:
//   - .Files.Get / .Files.Glob / .Files.Exists / .Files.IsDir read the project
//     directory (Glob supports ** and {a,b} like werf's doublestar matcher);
//   - include and tpl execute named templates and template text; the named
//     templates come from .werf/**/*.tmpl, which werf loads automatically;
//   - env reads an environment variable, but only one that
//     werf-giterminism.yaml allows (werf refuses the others), with an optional
//     default;
//   - fromYaml/toYaml as in Helm; required fails on an empty value;
//     expandenv is absent as in werf;
//   - build secrets (Giterminism.CheckSecrets): a secret given by value, from
//     an environment variable or from a file must be listed in
//     werf-giterminism.yaml config.secrets, as werf's configuration loader
//     demands in its default, strict giterminism mode.
//
// Why an emulation and not werf itself: werf is not buildable here from its
// Go module. The module proxy this project may use refuses it (checked
// 2026-12-04, from a scratch module under /tmp):
//
//	go list -m -versions github.com/werf/werf/v2
//	  → reading https://proxy.golang.org/github.com/werf/werf/v2/@v/list: 403 Forbidden
//	    (This module version is not available.)
//	go mod download -json github.com/werf/werf/v2@v2.77.1   (the newest v2 tag)
//	go mod download -json github.com/werf/werf/v2@v2.50.0
//	go mod download -json github.com/werf/werf/v3@v3.2.0    (the newest tag; its go.mod still says /v2)
//	  → each: .info: 403 Forbidden (This module version is not available.)
//
// so there is no `werf config render` to run (with giterminism on, as
// Deckhouse CI does) and no build time to measure. Should the proxy serve it
// one day, it belongs in dev/tools/werf like dev/tools/kube-apiserver, with a
// test here rendering werf.yaml with both and comparing.
//
// What this emulation does not check, which the real werf would:
//   - the rendered configuration against werf's own schema: unknown or
//     misspelt directives, wrong types, stage names, `fromImage`/`from`
//     references to images that do not exist, `dependencies`, `imageSpec`
//     (the tests here check only the fields config.go decodes);
//   - giterminism for files: werf reads .Files and `git` stage paths from the
//     commit, and refuses uncommitted files not listed in allowUncommittedFiles
//     and symlinks; the emulation reads the work tree (plus Overlay) and does
//     not check allowUncommittedFiles, allowFiles or `git.add` paths exist;
//   - werf's template functions the module does not use: an unknown function
//     fails the render here, which werf might accept;
//   - anything of the build itself: stage digests, build secrets actually
//     being hidden from layers, the Dockerfile/stapel instructions running.
//
// It is development tooling: nothing here ships in the bundle.
package werfrender

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// Options describe the environment werf runs in.
type Options struct {
	// Root is the project directory (the one holding werf.yaml).
	Root string
	// Env is the process environment werf sees; only variables allowed by
	// werf-giterminism.yaml may be read from it.
	Env map[string]string
	// Overlay holds files the CI lays into the work tree before the build
	// (base_images.yml); they shadow files of Root with the same path.
	Overlay map[string]string
	// CommitHash is what .Commit.Hash returns.
	CommitHash string
}

// Render renders werf.yaml of opts.Root and returns the resulting
// multi-document YAML text.
func Render(opts Options) (string, error) {
	files := &Files{root: opts.Root, overlay: opts.Overlay}
	giterminism, err := loadGiterminism(files)
	if err != nil {
		return "", err
	}
	allowed := giterminism.Env

	main, err := files.Get("werf.yaml")
	if err != nil {
		return "", err
	}

	var root *template.Template
	funcs := sprig.TxtFuncMap()
	delete(funcs, "expandenv")
	funcs["env"] = func(name string, def ...string) (string, error) {
		if !allowed(name) {
			return "", fmt.Errorf("env %q: not allowed by werf-giterminism.yaml config.goTemplateRendering.allowEnvVariables", name)
		}
		if v, ok := opts.Env[name]; ok && v != "" {
			return v, nil
		}
		if len(def) > 0 {
			return def[0], nil
		}
		return "", nil
	}
	funcs["include"] = func(name string, data any) (string, error) {
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return "", fmt.Errorf("include %q: %w", name, err)
		}
		return buf.String(), nil
	}
	funcs["tpl"] = func(text string, data any) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", fmt.Errorf("tpl: clone templates: %w", err)
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", fmt.Errorf("tpl: parse: %w", err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", fmt.Errorf("tpl: %w", err)
		}
		return buf.String(), nil
	}
	// fromYaml/toYaml behave as in Helm, from which werf takes them: a
	// document that does not parse yields a map holding "Error".
	funcs["fromYaml"] = func(text string) map[string]any {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(text), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	funcs["toYaml"] = func(v any) string {
		b, err := yaml.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(b), "\n")
	}
	funcs["required"] = func(msg string, v any) (any, error) {
		if v == nil || v == "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}

	root = template.New("werf.yaml").Funcs(funcs).Option("missingkey=default")
	partials, err := files.Glob(".werf/**/*.tmpl")
	if err != nil {
		return "", err
	}
	for _, name := range sortedKeys(partials) {
		if _, err := root.New(name).Parse(partials[name]); err != nil {
			return "", fmt.Errorf("parse %s: %w", name, err)
		}
	}
	if _, err := root.Parse(main); err != nil {
		return "", fmt.Errorf("parse werf.yaml: %w", err)
	}

	data := map[string]any{
		"Files":  files,
		"Env":    "",
		"Commit": map[string]any{"Hash": opts.CommitHash},
	}
	var out bytes.Buffer
	if err := root.ExecuteTemplate(&out, "werf.yaml", data); err != nil {
		return "", fmt.Errorf("render werf.yaml: %w", err)
	}
	return out.String(), nil
}

// Giterminism is what werf-giterminism.yaml allows of the environment.
type Giterminism struct {
	// Env matches the variables templates may read with env
	// (config.goTemplateRendering.allowEnvVariables).
	Env func(string) bool
	// SecretValueIDs, SecretEnv and SecretFiles are the build secrets an
	// image may declare by value (id), from an environment variable or from
	// a file (config.secrets.allowValueIds, allowEnvVariables, allowFiles):
	// werf refuses any other secret when it loads the configuration in its
	// default, strict giterminism mode.
	SecretValueIDs, SecretEnv, SecretFiles map[string]bool
}

// LoadGiterminism reads werf-giterminism.yaml of a project.
func LoadGiterminism(root string) (Giterminism, error) {
	return loadGiterminism(&Files{root: root})
}

// CheckSecrets refuses a build secret werf-giterminism.yaml does not allow,
// as werf does when it loads the configuration.
func (g Giterminism) CheckSecrets(cfg *Config) error {
	for _, img := range cfg.Images {
		for _, sec := range img.Secrets {
			switch {
			case sec.Value != "" && !g.SecretValueIDs[sec.ID]:
				return fmt.Errorf("image %s: secret %q given by value is not in werf-giterminism.yaml config.secrets.allowValueIds", img.Image, sec.ID)
			case sec.Env != "" && !g.SecretEnv[sec.Env]:
				return fmt.Errorf("image %s: secret from env %q is not in werf-giterminism.yaml config.secrets.allowEnvVariables", img.Image, sec.Env)
			case sec.Src != "" && !g.SecretFiles[sec.Src]:
				return fmt.Errorf("image %s: secret from file %q is not in werf-giterminism.yaml config.secrets.allowFiles", img.Image, sec.Src)
			}
		}
	}
	return nil
}

// loadGiterminism reads werf-giterminism.yaml; without the file werf allows
// no variable and no secret.
func loadGiterminism(files *Files) (Giterminism, error) {
	g := Giterminism{Env: func(string) bool { return false }, SecretValueIDs: map[string]bool{}, SecretEnv: map[string]bool{}, SecretFiles: map[string]bool{}}
	if !files.Exists("werf-giterminism.yaml") {
		return g, nil
	}
	text, err := files.Get("werf-giterminism.yaml")
	if err != nil {
		return g, err
	}
	var cfg struct {
		GiterminismConfigVersion int `json:"giterminismConfigVersion"`
		Config                   struct {
			GoTemplateRendering struct {
				AllowEnvVariables     []string `json:"allowEnvVariables"`
				AllowUncommittedFiles []string `json:"allowUncommittedFiles"`
			} `json:"goTemplateRendering"`
			Secrets struct {
				AllowValueIDs     []string `json:"allowValueIds"`
				AllowEnvVariables []string `json:"allowEnvVariables"`
				AllowFiles        []string `json:"allowFiles"`
			} `json:"secrets"`
		} `json:"config"`
	}
	if err := yaml.UnmarshalStrict([]byte(text), &cfg); err != nil {
		return g, fmt.Errorf("parse werf-giterminism.yaml: %w", err)
	}
	for _, set := range []struct {
		dst map[string]bool
		src []string
	}{{g.SecretValueIDs, cfg.Config.Secrets.AllowValueIDs}, {g.SecretEnv, cfg.Config.Secrets.AllowEnvVariables}, {g.SecretFiles, cfg.Config.Secrets.AllowFiles}} {
		for _, v := range set.src {
			set.dst[v] = true
		}
	}
	var exact []string
	var patterns []*regexp.Regexp
	for _, v := range cfg.Config.GoTemplateRendering.AllowEnvVariables {
		// werf treats /.../ as a regular expression matching the whole name.
		if len(v) > 1 && strings.HasPrefix(v, "/") && strings.HasSuffix(v, "/") {
			re, err := regexp.Compile("^(?:" + v[1:len(v)-1] + ")$")
			if err != nil {
				return g, fmt.Errorf("werf-giterminism.yaml: allowEnvVariables %q: %w", v, err)
			}
			patterns = append(patterns, re)
			continue
		}
		exact = append(exact, v)
	}
	g.Env = func(name string) bool {
		for _, e := range exact {
			if e == name {
				return true
			}
		}
		for _, re := range patterns {
			if re.MatchString(name) {
				return true
			}
		}
		return false
	}
	return g, nil
}

// Files is the .Files object of werf templates: project files addressed by
// slash-separated paths relative to the project directory.
type Files struct {
	root    string
	overlay map[string]string
}

// Get returns the content of a file; werf fails the render on a missing one.
func (f *Files) Get(p string) (string, error) {
	p = path.Clean(p)
	if v, ok := f.overlay[p]; ok {
		return v, nil
	}
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(p)))
	if err != nil {
		return "", fmt.Errorf(".Files.Get %q: %w", p, err)
	}
	return string(b), nil
}

// Exists reports whether a file or directory exists.
func (f *Files) Exists(p string) bool {
	p = path.Clean(p)
	if _, ok := f.overlay[p]; ok {
		return true
	}
	_, err := os.Stat(filepath.Join(f.root, filepath.FromSlash(p)))
	return err == nil
}

// IsDir reports whether p is a directory.
func (f *Files) IsDir(p string) bool {
	st, err := os.Stat(filepath.Join(f.root, filepath.FromSlash(path.Clean(p))))
	return err == nil && st.IsDir()
}

// Glob returns the regular files matching pattern, keyed by path, with their
// content.
func (f *Files) Glob(pattern string) (map[string]string, error) {
	res := map[string]string{}
	err := filepath.WalkDir(f.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(f.root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !Match(pattern, rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		res[rel] = string(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf(".Files.Glob %q: %w", pattern, err)
	}
	for p, v := range f.overlay {
		if Match(pattern, p) {
			res[p] = v
		}
	}
	return res, nil
}

// Match reports whether a slash-separated path matches a doublestar pattern:
// * and ? within one segment, ** across any number of segments, {a,b}
// alternatives. It is also how werf matches git includePaths/excludePaths
// globs, so the bundle checks use it too.
func Match(pattern, name string) bool {
	for _, p := range expandBraces(pattern) {
		if matchSegments(strings.Split(p, "/"), strings.Split(name, "/")) {
			return true
		}
	}
	return false
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func expandBraces(p string) []string {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}
	}
	depth := 0
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				var out []string
				for _, alt := range splitTopLevel(p[open+1 : i]) {
					out = append(out, expandBraces(p[:open]+alt+p[i+1:])...)
				}
				return out
			}
		}
	}
	return []string{p}
}

func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
