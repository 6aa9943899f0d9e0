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
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yamlv3 "gopkg.in/yaml.v3"
)

// Config is a rendered werf.yaml: the meta document and the image documents.
type Config struct {
	Meta   Meta
	Images []Image
}

// Meta is the first document of werf.yaml.
type Meta struct {
	Project       string         `yaml:"project"`
	ConfigVersion int            `yaml:"configVersion"`
	Build         map[string]any `yaml:"build"`
	GitWorktree   map[string]any `yaml:"gitWorktree"`
	Cleanup       map[string]any `yaml:"cleanup"`
}

// Image is one image document. Only the directives of werf's image section
// are accepted: an unknown key (a typo such as includePath) fails the parse,
// as it fails werf.
type Image struct {
	Image            string         `yaml:"image"`
	From             string         `yaml:"from"`
	FromImage        string         `yaml:"fromImage"`
	FromCacheVersion string         `yaml:"fromCacheVersion"`
	Final            *bool          `yaml:"final"`
	Git              []Git          `yaml:"git"`
	Import           []Import       `yaml:"import"`
	Dependencies     []Dependency   `yaml:"dependencies"`
	Shell            *Shell         `yaml:"shell"`
	Secrets          []Secret       `yaml:"secrets"`
	Mount            []Mount        `yaml:"mount"`
	ImageSpec        map[string]any `yaml:"imageSpec"`
	Context          string         `yaml:"context"`
	Dockerfile       string         `yaml:"dockerfile"`
	Platform         []string       `yaml:"platform"`
}

// IsFinal reports whether werf pushes the image (final defaults to true).
func (i Image) IsFinal() bool { return i.Final == nil || *i.Final }

// Git is a git directive: files of the repository added into the image.
type Git struct {
	Add               string              `yaml:"add"`
	To                string              `yaml:"to"`
	URL               string              `yaml:"url"`
	Branch            string              `yaml:"branch"`
	IncludePaths      []string            `yaml:"includePaths"`
	ExcludePaths      []string            `yaml:"excludePaths"`
	StageDependencies map[string][]string `yaml:"stageDependencies"`
	Owner             string              `yaml:"owner"`
	Group             string              `yaml:"group"`
}

// Import copies files from another image or artifact.
type Import struct {
	Image        string   `yaml:"image"`
	From         string   `yaml:"from"`
	Add          string   `yaml:"add"`
	To           string   `yaml:"to"`
	Before       string   `yaml:"before"`
	After        string   `yaml:"after"`
	IncludePaths []string `yaml:"includePaths"`
	ExcludePaths []string `yaml:"excludePaths"`
	Owner        string   `yaml:"owner"`
	Group        string   `yaml:"group"`
}

// Dependency makes another image's build-time facts (its digest) available.
type Dependency struct {
	Image   string             `yaml:"image"`
	Before  string             `yaml:"before"`
	After   string             `yaml:"after"`
	Imports []DependencyImport `yaml:"imports"`
}

// DependencyImport is one fact a dependency exports into the environment.
type DependencyImport struct {
	Type      string `yaml:"type"`
	TargetEnv string `yaml:"targetEnv"`
}

// Shell holds the shell stages of an image.
type Shell struct {
	BeforeInstall []string `yaml:"beforeInstall"`
	Install       []string `yaml:"install"`
	BeforeSetup   []string `yaml:"beforeSetup"`
	Setup         []string `yaml:"setup"`
}

// Commands returns every shell command in stage order.
func (s *Shell) Commands() []string {
	if s == nil {
		return nil
	}
	var all []string
	for _, stage := range [][]string{s.BeforeInstall, s.Install, s.BeforeSetup, s.Setup} {
		all = append(all, stage...)
	}
	return all
}

// Secret is a build secret mounted under /run/secrets/<id>.
type Secret struct {
	ID    string `yaml:"id"`
	Value string `yaml:"value"`
	Env   string `yaml:"env"`
	Src   string `yaml:"src"`
}

// Mount is a build-time mount.
type Mount struct {
	From      string `yaml:"from"`
	FromPath  string `yaml:"fromPath"`
	To        string `yaml:"to"`
	FromImage string `yaml:"fromImage"`
}

// Parse splits rendered werf.yaml into documents and decodes them strictly.
// Empty documents (comments only) are skipped as werf skips them.
func Parse(rendered string) (*Config, error) {
	dec := yamlv3.NewDecoder(strings.NewReader(rendered))
	cfg := &Config{}
	for n := 0; ; n++ {
		var node yamlv3.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("werf.yaml document %d: %w", n, err)
		}
		if len(node.Content) == 0 || (node.Content[0].Kind == yamlv3.ScalarNode && node.Content[0].Tag == "!!null") {
			continue
		}
		var keys struct {
			Project string `yaml:"project"`
			Image   any    `yaml:"image"`
		}
		if err := node.Decode(&keys); err != nil {
			return nil, fmt.Errorf("werf.yaml document %d: %w", n, err)
		}
		var out bytes.Buffer
		if err := yamlv3.NewEncoder(&out).Encode(&node); err != nil {
			return nil, fmt.Errorf("werf.yaml document %d: re-encode: %w", n, err)
		}
		strict := yamlv3.NewDecoder(&out)
		strict.KnownFields(true)
		switch {
		case keys.Project != "":
			if cfg.Meta.Project != "" {
				return nil, fmt.Errorf("werf.yaml document %d: a second meta document", n)
			}
			if err := strict.Decode(&cfg.Meta); err != nil {
				return nil, fmt.Errorf("werf.yaml meta document: %w", err)
			}
		case keys.Image != nil:
			var img Image
			if err := strict.Decode(&img); err != nil {
				return nil, fmt.Errorf("werf.yaml document %d (image %v): %w", n, keys.Image, err)
			}
			cfg.Images = append(cfg.Images, img)
		default:
			return nil, fmt.Errorf("werf.yaml document %d is neither the meta document nor an image: %s", n, out.String())
		}
	}
	if cfg.Meta.Project == "" {
		return nil, errors.New("werf.yaml has no meta document (project:)")
	}
	seen := map[string]bool{}
	for _, img := range cfg.Images {
		if seen[img.Image] {
			return nil, fmt.Errorf("werf.yaml defines image %q twice", img.Image)
		}
		seen[img.Image] = true
	}
	return cfg, nil
}

// Image returns the image named name.
func (c *Config) Image(name string) (Image, bool) {
	for _, img := range c.Images {
		if img.Image == name {
			return img, true
		}
	}
	return Image{}, false
}
