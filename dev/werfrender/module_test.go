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
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/gobuild"
)

const (
	repoRoot   = "../.."
	modulePath = "github.com/deckhouse/managed-starrocks"
)

// ciBaseImages stands in for the base_images.yml Deckhouse CI lays into the
// work tree: the same shape (REGISTRY_PATH plus name: digest), fake digests.
const ciBaseImages = `REGISTRY_PATH: registry.example.test/base_images
builder/scratch: "sha256:0000000000000000000000000000000000000000000000000000000000000001"
builder/alpine: "sha256:0000000000000000000000000000000000000000000000000000000000000002"
builder/golang-alt: "sha256:0000000000000000000000000000000000000000000000000000000000000003"
builder/distroless: "sha256:0000000000000000000000000000000000000000000000000000000000000004"
`

// The bundle: what Deckhouse loads as the module, and nothing else.
var bundleGitPaths = []string{".helmignore", "Chart.yaml", "module.yaml", "templates", "crds", "openapi", "monitoring", "docs"}

// The images the templates address by digest key.
var wantDigestKeys = []string{"agent", "starrocksBe", "starrocksCn", "starrocksFe", "webhook"}

func renderModule(t *testing.T) *Config {
	t.Helper()
	out, err := Render(Options{
		Root:    repoRoot,
		Env:     map[string]string{"MODULES_MODULE_TAG": "v0.1.0", "CI_COMMIT_REF_NAME": "v0.1.0"},
		Overlay: map[string]string{"base_images.yml": ciBaseImages},
	})
	if err != nil {
		t.Fatalf("render werf.yaml: %v", err)
	}
	cfg, err := Parse(out)
	if err != nil {
		t.Fatalf("parse rendered werf.yaml: %v\n%s", err, out)
	}
	g, err := LoadGiterminism(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CheckSecrets(cfg); err != nil {
		t.Fatalf("werf would refuse the configuration: %v", err)
	}
	return cfg
}

func mustImage(t *testing.T, cfg *Config, name string) Image {
	t.Helper()
	img, ok := cfg.Image(name)
	if !ok {
		t.Fatalf("werf.yaml has no image %q", name)
	}
	return img
}

// Without base_images.yml (dmt lint, a render on a laptop) the config renders,
// with base images no registry can serve: a build fails at its first pull with
// a reference that names the missing file.
func TestModuleRendersWithoutCIBaseImages(t *testing.T) {
	out, err := Render(Options{Root: repoRoot, Env: map[string]string{"MODULES_MODULE_TAG": "v0.1.0"}})
	if err != nil {
		t.Fatalf("render without base_images.yml: %v", err)
	}
	cfg, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range cfg.Images {
		if img.From != "" && !strings.HasPrefix(img.From, "base-images-yml-is-missing.invalid/") &&
			!strings.HasPrefix(img.From, "starrocks/") {
			t.Errorf("image %s from %q: want a placeholder under base-images-yml-is-missing.invalid/", img.Image, img.From)
		}
	}
	if img := mustImage(t, cfg, "webhook"); img.From != "base-images-yml-is-missing.invalid/builder/distroless@sha256:"+strings.Repeat("0", 64) {
		t.Errorf("webhook from %q", img.From)
	}
}

// A base_images.yml that is present but incomplete is a CI fault: fail clearly.
func TestModuleRenderFailsOnIncompleteBaseImages(t *testing.T) {
	for name, content := range map[string]string{
		"no REGISTRY_PATH":      strings.Replace(ciBaseImages, "REGISTRY_PATH: registry.example.test/base_images\n", "", 1),
		"no builder/distroless": strings.Replace(ciBaseImages, `builder/distroless: "sha256:0000000000000000000000000000000000000000000000000000000000000004"`+"\n", "", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if content == ciBaseImages {
				t.Fatal("the test did not remove anything")
			}
			_, err := Render(Options{Root: repoRoot, Overlay: map[string]string{"base_images.yml": content}})
			want := "base_images.yml has " + name
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("want an error containing %q, got %v", want, err)
			}
		})
	}
}

func TestModuleWerfConfig(t *testing.T) {
	cfg := renderModule(t)

	t.Run("project is the module", func(t *testing.T) {
		if cfg.Meta.Project != "managed-starrocks" || cfg.Meta.ConfigVersion != 1 {
			t.Fatalf("meta = %+v", cfg.Meta)
		}
	})

	t.Run("every images directory has a final image of its name", func(t *testing.T) {
		entries, err := os.ReadDir(filepath.Join(repoRoot, "images"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			img, ok := cfg.Image(e.Name())
			if !ok || !img.IsFinal() {
				t.Errorf("images/%s has no final werf image named %q", e.Name(), e.Name())
			}
		}
	})

	digests := mustImage(t, cfg, "images-digests")
	keys := map[string]string{} // digest key -> image
	for _, dep := range digests.Dependencies {
		for _, imp := range dep.Imports {
			if imp.Type != "ImageDigest" || !strings.HasPrefix(imp.TargetEnv, "MODULE_IMAGE_DIGEST_") {
				t.Errorf("dependency %s: import %+v is not an image digest", dep.Image, imp)
				continue
			}
			keys[strings.TrimPrefix(imp.TargetEnv, "MODULE_IMAGE_DIGEST_")] = dep.Image
		}
	}

	t.Run("images_digests.json holds exactly the final images under camelCase keys", func(t *testing.T) {
		var got []string
		for k := range keys {
			got = append(got, k)
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(wantDigestKeys, ",") {
			t.Fatalf("digest keys = %v, want %v", got, wantDigestKeys)
		}
		for key, image := range keys {
			if camel := camelKey(image); camel != key {
				t.Errorf("image %s has digest key %s, templates expect %s", image, key, camel)
			}
			if img := mustImage(t, cfg, image); !img.IsFinal() {
				t.Errorf("digest of non-final image %s", image)
			}
		}
		for _, img := range cfg.Images {
			if img.IsFinal() && img.Image != "bundle" && img.Image != "release-channel-version" {
				if _, ok := keys[camelKey(img.Image)]; !ok {
					t.Errorf("final image %s has no digest entry", img.Image)
				}
			}
		}
	})

	t.Run("every image a template references by digest key exists", func(t *testing.T) {
		refs, err := templateDigestRefs(filepath.Join(repoRoot, "templates"))
		if err != nil {
			t.Fatal(err)
		}
		if len(refs) == 0 {
			t.Fatal("no template references an image digest: the templates changed how they name images, update digestRefRes")
		}
		for ref, file := range refs {
			if _, ok := keys[ref]; !ok {
				t.Errorf("%s references digests.managedStarrocks.%s, which images_digests.json does not have (have %v)", file, ref, wantDigestKeys)
			}
		}
	})

	// dmt's werf rule: the user a container runs as is the pod's business
	// (securityContext.runAsUser in the templates, held by
	// dev/chartrender's security tests), not the image's.
	t.Run("final images leave imageSpec.config.user empty", func(t *testing.T) {
		for _, img := range cfg.Images {
			if !img.IsFinal() {
				continue
			}
			if user := imageUser(img); user != "" {
				t.Errorf("image %s sets imageSpec.config.user %q", img.Image, user)
			}
		}
	})

	t.Run("Go images are distroless", func(t *testing.T) {
		distroless := "registry.example.test/base_images@sha256:0000000000000000000000000000000000000000000000000000000000000004"
		for _, name := range []string{"agent", "webhook"} {
			if img := mustImage(t, cfg, name); img.From != distroless {
				t.Errorf("%s from %q, want the distroless base %q", name, img.From, distroless)
			}
		}
	})

	t.Run("StarRocks images use the version pinned in oss.yaml", func(t *testing.T) {
		version := ossStarrocksVersion(t)
		if !regexp.MustCompile(`^4\.1\.[1-9][0-9]*$`).MatchString(version) {
			t.Fatalf("oss.yaml pins StarRocks %q: want 4.1.x and not 4.1.0 (its container images cannot start BE)", version)
		}
		for name, repo := range map[string]string{"starrocks-fe": "starrocks/fe-ubuntu", "starrocks-be": "starrocks/be-ubuntu", "starrocks-cn": "starrocks/cn-ubuntu"} {
			// By tag, or by tag and digest once the digest is recorded.
			pinned := regexp.MustCompile(`^` + regexp.QuoteMeta(repo+":"+version) + `(@sha256:[0-9a-f]{64})?$`)
			if img := mustImage(t, cfg, name); !pinned.MatchString(img.From) {
				t.Errorf("%s from %q, want %s:%s[@sha256:<digest>]", name, img.From, repo, version)
			}
		}
	})

	builds := goBuilds(t, cfg)

	t.Run("werf builds the same binaries with the same flags as make build", func(t *testing.T) {
		out, err := exec.Command(filepath.Join(repoRoot, "dev/scripts/build.sh"), "--list").Output()
		if err != nil {
			t.Fatalf("build.sh --list: %v", err)
		}
		want := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				t.Fatalf("build.sh --list line %q", line)
			}
			want[f[0]] = f[1]
		}
		got := map[string]string{}
		for _, b := range builds {
			got[b.binary] = b.pkg
			for _, flag := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags="-s -w"`} {
				if !strings.Contains(b.command, flag) {
					t.Errorf("werf builds %s without %s: %s", b.binary, flag, b.command)
				}
			}
		}
		if !equalMaps(got, want) {
			t.Fatalf("werf builds %v, build.sh builds %v", got, want)
		}
		script, err := os.ReadFile(filepath.Join(repoRoot, "dev/scripts/build.sh"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(script), `CGO_ENABLED=0 go build -trimpath -ldflags="-s -w"`) {
			t.Error(`build.sh does not build with CGO_ENABLED=0 -trimpath -ldflags="-s -w"`)
		}
	})

	t.Run("each Go source artifact holds every package its binary imports", func(t *testing.T) {
		for _, b := range builds {
			src := mustImage(t, cfg, b.srcImage)
			if len(src.Git) != 1 {
				t.Fatalf("%s: want one git directive, got %d", b.srcImage, len(src.Git))
			}
			out, err := goCmd(t, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", b.pkg)
			if err != nil {
				t.Errorf("%s: go list %s: %v\n%s", b.binary, b.pkg, err, out)
				continue
			}
			for _, imp := range strings.Fields(out) {
				if !strings.HasPrefix(imp, modulePath+"/") {
					continue
				}
				dir := strings.TrimPrefix(imp, modulePath+"/")
				if !gitIncludes(src.Git[0], dir+"/x.go") {
					t.Errorf("%s imports %s, but %s does not copy %s/", b.binary, imp, b.srcImage, dir)
				}
			}
			for _, f := range []string{"go.mod", "go.sum"} {
				if !gitIncludes(src.Git[0], f) {
					t.Errorf("%s does not copy %s", b.srcImage, f)
				}
			}
		}
	})

	t.Run("the bundle holds exactly what Deckhouse loads", func(t *testing.T) {
		bundle := mustImage(t, cfg, "bundle")
		var imports []string
		for _, imp := range bundle.Import {
			imports = append(imports, imp.Image+":"+imp.Add+"->"+imp.To)
		}
		sort.Strings(imports)
		wantImports := []string{
			"go-hooks-build-artifact:/out/go-hooks->/hooks/go-hooks",
			"images-digests:/images_digests.json->/images_digests.json",
		}
		if strings.Join(imports, " ") != strings.Join(wantImports, " ") {
			t.Fatalf("bundle imports %v, want %v", imports, wantImports)
		}
		if len(bundle.Git) != 1 || bundle.Git[0].Add != "/" || bundle.Git[0].To != "/" {
			t.Fatalf("bundle git = %+v, want one directive adding / to /", bundle.Git)
		}
		got := append([]string(nil), bundle.Git[0].IncludePaths...)
		sort.Strings(got)
		want := append([]string(nil), bundleGitPaths...)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("bundle includePaths %v, want %v", got, want)
		}

		files := bundleFiles(t, bundle.Git[0])
		present := map[string]bool{}
		for _, f := range files {
			top := strings.SplitN(f, "/", 2)[0]
			present[top] = true
			if strings.HasSuffix(f, ".go") || path.Base(f) == "go.mod" || path.Base(f) == "go.sum" {
				t.Errorf("bundle would contain Go source %s", f)
			}
		}
		for _, p := range bundleGitPaths {
			if !present[p] {
				t.Errorf("bundle would have no %s: it is missing from the repository", p)
			}
		}
	})

	t.Run("the release image carries version.json, changelog.yaml and module.yaml", func(t *testing.T) {
		rel := mustImage(t, cfg, "release-channel-version")
		imported := map[string]string{}
		for _, imp := range rel.Import {
			imported[imp.To] = imp.Image
		}
		if len(rel.Import) != 2 || imported["/version.json"] != "images-digests" || imported["/changelog.yaml"] != "release-changelog" {
			t.Fatalf("release imports %+v", rel.Import)
		}
		// changelog.yaml is CHANGELOG/<tag>.yml of the tag built (as
		// deckhouse/csi-nfs lays it), and that file exists for the tag.
		changelog := mustImage(t, cfg, "release-changelog")
		if changelog.IsFinal() || len(changelog.Git) != 1 || changelog.Git[0].Add != "/CHANGELOG" {
			t.Fatalf("release-changelog: %+v", changelog)
		}
		cmds := strings.Join(changelog.Shell.Commands(), "\n")
		if !strings.Contains(cmds, "cp '/CHANGELOG/v0.1.0.yml' /changelog.yaml") {
			t.Fatalf("changelog.yaml is not CHANGELOG/<MODULES_MODULE_TAG>.yml: %q", cmds)
		}
		if _, err := os.Stat(filepath.Join(repoRoot, "CHANGELOG", "v0.1.0.yml")); err != nil {
			t.Fatalf("the tag the test builds has no changelog: %v", err)
		}
		if len(rel.Git) != 1 || !gitIncludes(rel.Git[0], "module.yaml") {
			t.Fatalf("release image does not carry module.yaml: %+v", rel.Git)
		}
		var versionCmd string
		for _, c := range digests.Shell.Commands() {
			if strings.Contains(c, "version.json") && strings.Contains(c, "printf") {
				versionCmd = c
			}
		}
		if !strings.Contains(versionCmd, `"v0.1.0"`) {
			t.Fatalf("version.json is not written from MODULES_MODULE_TAG: %q", versionCmd)
		}
	})
}

type goBuild struct {
	srcImage, binary, pkg, command string
}

var goBuildRe = regexp.MustCompile(`go build .*-o /out/(\S+) (\./\S+)$`)

// goBuilds finds every `go build` of the rendered config and the source
// artifact its builder imports.
func goBuilds(t *testing.T, cfg *Config) []goBuild {
	t.Helper()
	var builds []goBuild
	for _, img := range cfg.Images {
		for _, c := range img.Shell.Commands() {
			m := goBuildRe.FindStringSubmatch(strings.TrimSpace(c))
			if m == nil {
				continue
			}
			if len(img.Import) != 1 {
				t.Fatalf("%s: want one import of its source artifact, got %+v", img.Image, img.Import)
			}
			builds = append(builds, goBuild{srcImage: img.Import[0].Image, binary: m[1], pkg: m[2], command: c})
		}
	}
	if len(builds) == 0 {
		t.Fatal("no go build in the rendered werf.yaml")
	}
	return builds
}

func goCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// camelKey is how .werf/images-digests.yaml names a digest (sprig camelcase
// then untitle): starrocks-fe -> starrocksFe.
func camelKey(image string) string {
	parts := strings.FieldsFunc(path.Base(image), func(r rune) bool { return r == '-' || r == '_' })
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

var digestRefRes = []*regexp.Regexp{
	regexp.MustCompile(`digests\.managedStarrocks\.([A-Za-z0-9]+)`),
	regexp.MustCompile(`digests\.managedStarrocks\s+"([A-Za-z0-9]+)"`),
	// The templates' image helper: include "ms.image" (list $ "starrocksFe").
	regexp.MustCompile(`include\s+"ms\.image"\s+\(list\s+\S+\s+"([A-Za-z0-9]+)"\)`),
}

// templateDigestRefs returns each digest key the templates use, with a file
// that uses it.
func templateDigestRefs(dir string) (map[string]string, error) {
	refs := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for ref := range digestRefs(string(b)) {
			refs[ref] = p
		}
		return nil
	})
	return refs, err
}

func digestRefs(text string) map[string]bool {
	refs := map[string]bool{}
	for _, re := range digestRefRes {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			refs[m[1]] = true
		}
	}
	return refs
}

func TestDigestRefsFindsEveryTemplateSpelling(t *testing.T) {
	text := `image: {{ .Values.global.modulesImages.registry.base }}@{{ .Values.global.modulesImages.digests.managedStarrocks.starrocksFe }}
image: {{ index .Values.global.modulesImages.digests.managedStarrocks "agent" }}
image: {{ include "ms.image" (list $ "starrocksBe") }}`
	got := digestRefs(text)
	if len(got) != 3 || !got["starrocksFe"] || !got["agent"] || !got["starrocksBe"] {
		t.Fatalf("digestRefs = %v", got)
	}
}

func imageUser(img Image) string {
	cfg, _ := img.ImageSpec["config"].(map[string]any)
	user, _ := cfg["user"].(string)
	return user
}

func ossStarrocksVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "oss.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Link        string `json:"link"`
		Logo        string `json:"logo"`
		License     string `json:"license"`
		Version     string `json:"version"`
	}
	if err := yaml.UnmarshalStrict(b, &entries); err != nil {
		t.Fatalf("oss.yaml: %v", err)
	}
	for _, e := range entries {
		if e.ID == "starrocks" {
			if e.License != "Apache License 2.0" || !strings.HasPrefix(e.Link, "https://") {
				t.Errorf("oss.yaml starrocks: license %q link %q", e.License, e.Link)
			}
			return e.Version
		}
	}
	t.Fatal("oss.yaml has no starrocks entry")
	return ""
}

// gitIncludes applies a git directive's includePaths/excludePaths to a
// repository path as werf does: a listed path takes the file itself or
// everything under it, and the entries are globs.
func gitIncludes(g Git, file string) bool {
	matches := func(list []string) bool {
		for _, p := range list {
			p = strings.TrimPrefix(p, "/")
			if file == p || strings.HasPrefix(file, p+"/") || Match(p, file) || Match(p+"/**", file) {
				return true
			}
		}
		return false
	}
	if len(g.IncludePaths) > 0 && !matches(g.IncludePaths) {
		return false
	}
	return !matches(g.ExcludePaths)
}

// bundleFiles lists the repository files the bundle's git directive takes:
// werf adds committed files, so the list comes from git, with files not yet
// committed but not ignored counted as well (they are about to be).
func bundleFiles(t *testing.T, g Git) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f != "" && gitIncludes(g, f) {
			files = append(files, f)
		}
	}
	return files
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMakeBuildProducesStaticBinaries runs `make build`'s script and checks
// what the images would get: every binary exists, is statically linked (no
// ELF interpreter: CGO_ENABLED=0) and has no symbol table (-s); the hooks
// binary answers addon-operator's `hook list` and `hook config`. The script
// writes into a folder of dev/gobuild's cache, where go build links only the
// binaries whose code or flags changed since the last run (three links cost
// about 7 CPU-seconds), and the test reads hard links of them.
func TestMakeBuildProducesStaticBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every binary of the module: not in -short")
	}
	list, err := exec.Command(filepath.Join(repoRoot, "dev/scripts/build.sh"), "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		names = append(names, strings.Fields(line)[0])
	}
	out := t.TempDir()
	err = gobuild.Cached(context.Background(), "make build", out, names, func(cacheDir string) error {
		cmd := exec.Command(filepath.Join(repoRoot, "dev/scripts/build.sh"))
		cmd.Env = append(os.Environ(), "OUT_DIR="+cacheDir)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("dev/scripts/build.sh: %w\n%s", err, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		f, err := elf.Open(filepath.Join(out, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked (has an ELF interpreter)", name)
			}
		}
		if f.Section(".symtab") != nil {
			t.Errorf("%s keeps its symbol table: not built with -s", name)
		}
		f.Close()
	}

	hooks := filepath.Join(out, "go-hooks")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	listOut, err := exec.CommandContext(ctx, hooks, "hook", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("go-hooks hook list: %v\n%s", err, listOut)
	}
	m := regexp.MustCompile(`Found (\d+) items`).FindStringSubmatch(string(listOut))
	if m == nil || m[1] == "0" {
		t.Fatalf("go-hooks hook list registered no hooks:\n%s", listOut)
	}
	cfgOut, err := exec.CommandContext(ctx, hooks, "hook", "config").Output()
	if err != nil {
		t.Fatalf("go-hooks hook config: %v", err)
	}
	var configs struct {
		Version string `json:"version"`
		Hooks   []struct {
			Metadata struct {
				Name string `json:"name"`
				Path string `json:"path"`
			} `json:"metadata"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(cfgOut, &configs); err != nil {
		t.Fatalf("go-hooks hook config is not JSON: %v\n%s", err, cfgOut)
	}
	if n, _ := strconv.Atoi(m[1]); len(configs.Hooks) != n {
		t.Fatalf("hook list shows %s hooks, hook config %d", m[1], len(configs.Hooks))
	}
	for _, h := range configs.Hooks {
		// module-sdk names hooks after their source path; built with
		// -trimpath that path is the import path, so the module name in it
		// is the module's own, not the build directory's.
		if !strings.HasPrefix(h.Metadata.Path, "managed-starrocks/hooks/") || !strings.Contains(string(listOut), h.Metadata.Name) {
			t.Errorf("hook %q has path %q, want managed-starrocks/hooks/...", h.Metadata.Name, h.Metadata.Path)
		}
	}
}
