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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yamlv3 "gopkg.in/yaml.v3"
)

// The CI of the module (.github/workflows) is that of the external modules
// built with deckhouse/modules-actions: deckhouse/csi-nfs build_dev.yml,
// build_prod.yml and deploy_prod.yml at d67dbca, modules-actions at 0204821.
// GitHub cannot run here, so what is checked is what those workflows rely
// on: each step that builds lays base_images.yml first, calls the actions
// with the inputs they declare, and the werf configuration those actions
// drive renders with the base images that file gives.

// actionInputs are the inputs each deckhouse/modules-actions action
// declares (its action.yml at 0204821), required ones marked true.
var actionInputs = map[string]map[string]bool{
	"lint":   {},
	"setup":  {"registry": true, "registry_login": true, "registry_password": true},
	"build":  {"module_source": true, "module_name": true, "module_tag": true, "secondary_repo": false, "svace_enabled": false, "svace_analyze_host": false, "svace_analyze_ssh_user": false, "svace_analyze_ssh_key": false, "source_repo": false, "source_repo_ssh_key": false},
	"deploy": {"module_source": true, "module_name": true, "module_tag": true, "release_channel": true},
}

// containerBaseKeys are the keys of deckhouse/container-base's
// base_images.yml (v1.3.10, the version the workflows download) that
// deckhouse/csi-nfs's recipes use; the file itself lives on an internal
// host. containerBaseGo is the Go of its builder/golang-alt: csi-nfs builds
// its hooks with it, at go 1.26.5 (hooks/go/go.mod, CHANGELOG v0.4.1
// "Go 1.26.5").
var containerBaseKeys = []string{"builder/alpine", "builder/distroless", "builder/golang-alt", "builder/scratch", "builder/src", "jq", "yq"}

const containerBaseGo = "1.26.5"

// workflow, workflowJob and workflowStep hold the keys of GitHub's workflow
// syntax the module uses; a key they do not have (a typo) fails the decode.
type workflow struct {
	Name        string                 `yaml:"name"`
	On          map[string]any         `yaml:"on"`
	Env         map[string]string      `yaml:"env"`
	Defaults    map[string]any         `yaml:"defaults"`
	Concurrency map[string]any         `yaml:"concurrency"`
	Jobs        map[string]workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	Name   string         `yaml:"name"`
	RunsOn yamlList       `yaml:"runs-on"`
	Needs  yamlList       `yaml:"needs"`
	If     string         `yaml:"if"`
	Steps  []workflowStep `yaml:"steps"`
}

type workflowStep struct {
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

// yamlList is a YAML string or list of strings (needs: takes both).
type yamlList []string

func (l *yamlList) UnmarshalYAML(n *yamlv3.Node) error {
	if n.Kind == yamlv3.ScalarNode {
		*l = []string{n.Value}
		return nil
	}
	var s []string
	err := n.Decode(&s)
	*l = s
	return err
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	dec := yamlv3.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w
}

var modulesActionRe = regexp.MustCompile(`^deckhouse/modules-actions/([a-z_]+)@(v[0-9]+)$`)

// checkActionStep checks a step using a modules-actions action against
// the inputs that action declares; it returns the action's name.
func checkActionStep(t *testing.T, where string, s workflowStep) string {
	t.Helper()
	m := modulesActionRe.FindStringSubmatch(s.Uses)
	if m == nil {
		t.Errorf("%s: %q is not a deckhouse/modules-actions action pinned to a major version", where, s.Uses)
		return ""
	}
	inputs, ok := actionInputs[m[1]]
	if !ok {
		t.Errorf("%s: modules-actions/%s is not one this test knows the inputs of", where, m[1])
		return m[1]
	}
	for in := range s.With {
		if _, ok := inputs[in]; !ok {
			t.Errorf("%s: modules-actions/%s has no input %q", where, m[1], in)
		}
	}
	for in, required := range inputs {
		if required && strings.TrimSpace(s.With[in]) == "" {
			t.Errorf("%s: modules-actions/%s needs input %q", where, m[1], in)
		}
	}
	return m[1]
}

func TestWorkflowsBuildAsModulesActionsDo(t *testing.T) {
	builds := map[string]string{"build_dev.yml": "dev", "build_prod.yml": "prod"}
	for file := range builds {
		t.Run(file, func(t *testing.T) {
			w := readWorkflow(t, file)
			if !strings.HasPrefix(w.Env["BASE_IMAGES_VERSION"], "v") {
				t.Errorf("env BASE_IMAGES_VERSION %q: the container-base release to download", w.Env["BASE_IMAGES_VERSION"])
			}
			if w.Env["GOPROXY"] == "" {
				t.Error("env GOPROXY is unset: the Go builders read it as a build secret (werf-giterminism.yaml)")
			}
			lint, ok := w.Jobs["lint"]
			if !ok || len(lint.Steps) == 0 || checkActionStep(t, "lint", lint.Steps[len(lint.Steps)-1]) != "lint" {
				t.Fatal("no lint job ending in modules-actions/lint (dmt)")
			}
			build, ok := w.Jobs["build"]
			if !ok {
				t.Fatal("no build job")
			}
			if !slices.Contains(build.Needs, "lint") {
				t.Error("the build does not wait for dmt")
			}
			var order []string
			for i, s := range build.Steps {
				where := fmt.Sprintf("build step %d", i)
				switch {
				case s.Uses == "actions/checkout@v4":
					order = append(order, "checkout")
				case strings.Contains(s.Run, "base_images.yml") && strings.Contains(s.Run, "${BASE_IMAGES_VERSION}"):
					if !strings.Contains(s.Run, "-O base_images.yml") {
						t.Errorf("%s: base_images.yml is not written into the work tree, where .werf/base-images.yaml reads it", where)
					}
					order = append(order, "base_images")
				case s.Uses != "":
					order = append(order, checkActionStep(t, where, s))
				}
			}
			if want := []string{"checkout", "base_images", "setup", "build"}; !slices.Equal(order, want) {
				t.Errorf("build steps %v, want %v", order, want)
			}
		})
	}
	t.Run("deploy.yml", func(t *testing.T) {
		w := readWorkflow(t, "deploy.yml")
		var actions []string
		for i, s := range w.Jobs["deploy"].Steps {
			if strings.HasPrefix(s.Uses, "deckhouse/") {
				actions = append(actions, checkActionStep(t, fmt.Sprintf("deploy step %d", i), s))
			}
		}
		if !slices.Equal(actions, []string{"setup", "deploy"}) {
			t.Errorf("deploy actions %v", actions)
		}
	})
}

// The werf configuration the build action drives renders with a
// base_images.yml that has container-base's keys and nothing else, and a
// file with only the monorepo's keys (deckhouse/deckhouse
// candi/base_images.yml: builder/golang-alpine, base/distroless) fails.
func TestWerfConfigUsesContainerBaseKeys(t *testing.T) {
	file := func(keys []string) string {
		var b strings.Builder
		b.WriteString("REGISTRY_PATH: registry.example.test/base_images\n")
		for i, k := range keys {
			fmt.Fprintf(&b, "%s: \"sha256:%064d\"\n", k, i+1)
		}
		return b.String()
	}
	env := map[string]string{"MODULES_MODULE_TAG": "v0.1.0"}
	out, err := Render(Options{Root: repoRoot, Env: env, Overlay: map[string]string{"base_images.yml": file(containerBaseKeys)}})
	if err != nil {
		t.Fatalf("render with container-base's keys: %v", err)
	}
	cfg, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range cfg.Images {
		if img.From != "" && !strings.HasPrefix(img.From, "registry.example.test/base_images@sha256:") && !strings.HasPrefix(img.From, "starrocks/") {
			t.Errorf("image %s from %q: neither a container-base image nor the upstream StarRocks image", img.Image, img.From)
		}
	}
	monorepo := []string{"builder/scratch", "builder/alpine", "builder/golang-alpine", "base/distroless"}
	if _, err := Render(Options{Root: repoRoot, Env: env, Overlay: map[string]string{"base_images.yml": file(monorepo)}}); err == nil {
		t.Error("the configuration renders with the monorepo's keys, which container-base's file does not have")
	}
}

// go.mod's go directive is above the Go of container-base's builder (its
// test-only dependencies need it), so every go command of a builder stage
// fetches the toolchain go.mod names through the module proxy
// (GOTOOLCHAIN=auto, GOPROXY), instead of failing where the image says
// GOTOOLCHAIN=local or using an older Go.
func TestGoBuildersGetTheToolchainGoModNames(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	needsToolchain := compareVersions(string(m[1]), containerBaseGo) > 0
	cfg := renderModule(t)
	n := 0
	for _, img := range cfg.Images {
		for _, c := range img.Shell.Commands() {
			if !regexp.MustCompile(`(^|\s)go (build|mod download)`).MatchString(c) {
				continue
			}
			n++
			if needsToolchain && (!strings.Contains(c, "GOTOOLCHAIN=auto") || !strings.Contains(c, "GOPROXY=")) {
				t.Errorf("image %s: %q runs the builder's Go %s for go.mod's go %s", img.Image, c, containerBaseGo, m[1])
			}
		}
	}
	if n == 0 {
		t.Fatal("no go command in the rendered configuration")
	}
}

// compareVersions compares dotted numeric versions.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			fmt.Sscan(as[i], &x)
		}
		if i < len(bs) {
			fmt.Sscan(bs[i], &y)
		}
		if x != y {
			return x - y
		}
	}
	return 0
}
