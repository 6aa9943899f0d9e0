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

package images

import (
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/gobuild"
	"github.com/deckhouse/managed-starrocks/dev/standin"
)

// Where the local node's images are named. Registry is the repository of
// the module's own images, the local run's global.modulesImages.registry.base:
// the .invalid domain never resolves (RFC 2606), so a node that misses an
// image fails to pull it instead of fetching something else.
const (
	Registry = "dev.managed-starrocks.invalid/deckhouse/modules/managed-starrocks"
	// PauseRef is the sandbox image; the node's containerd is configured
	// with it (CRI sandbox_image).
	PauseRef = "registry.k8s.io/pause:3.10"
	// BusyboxRef is a shell image for test pods (a client in another
	// namespace): the short name busybox, as the CRI resolves it.
	BusyboxRef = "docker.io/library/busybox:1.35"
	// BusyboxPath is Debian's busybox-static binary.
	BusyboxPath = "/bin/busybox"
	// ClientRef is the in-cluster client of docs/USAGE.md ("Connect over
	// TLS with the mysql client": image mysql:8.4), as the CRI resolves
	// the short name; here Debian's MariaDB client (ClientLayer).
	ClientRef = "docker.io/library/mysql:8.4"
	// MariaDBPath is Debian's MariaDB client (package mariadb-client).
	MariaDBPath = "/usr/bin/mariadb"
)

// StarRocks stand-in paths, as in starrocks/fe-ubuntu and
// starrocks/be-ubuntu (StarRocks/starrocks docker/dockerfiles/fe/fe-ubuntu.Dockerfile
// and be/be-ubuntu.Dockerfile: WORKDIR /opt/starrocks, the release copied
// into /opt/starrocks/{fe,be}, all owned by user and group starrocks, uid
// and gid 1000, fe/meta and be/storage created, cn a link to be; upstream's
// starrocks/cn-ubuntu comes from the BE's recipe, so a CN's files are the
// BE's, reached through /opt/starrocks/cn). Upstream's k8s scripts beside them
// (fe_entrypoint.sh, cn_entrypoint.sh and the like) are left out: the module
// runs its own fe-start.sh, be-start.sh and cn-start.sh and the bin/ scripts.
const (
	FEHome = "/opt/starrocks/fe"
	BEHome = "/opt/starrocks/be"
	// CNHome is where a CN's pod finds the release: the link to BEHome.
	CNHome = "/opt/starrocks/cn"
	// FEStartWrapper is where werf adds the module's fe-start.sh
	// (images/starrocks-fe/werf.inc.yaml).
	FEStartWrapper = "/opt/managed-starrocks/fe-start.sh"
	// BEStartWrapper is where werf adds the module's be-start.sh
	// (images/starrocks-be/werf.inc.yaml).
	BEStartWrapper = "/opt/managed-starrocks/be-start.sh"
	// CNStartWrapper is where werf adds the module's cn-start.sh
	// (images/starrocks-cn/werf.inc.yaml).
	CNStartWrapper = "/opt/managed-starrocks/cn-start.sh"
	// StandinFEBinary and StandinBEBinary are the stand-in servers, started
	// by the stand-in start scripts; the CN image runs the BE's with --cn,
	// as upstream's CN is starrocks_be --cn.
	StandinFEBinary = FEHome + "/lib/starrocks-fe-standin"
	StandinBEBinary = BEHome + "/lib/starrocks-be-standin"
	// StopsLog is the file, under the FE's meta and the BE's or CN's
	// storage directory (their persistent volumes), where a stand-in appends
	// one line per stop: which signal, graceful or not.
	StopsLog     = standin.StopsLog
	starrocksUID = 1000
)

//go:embed standin/*.sh
var standinScripts embed.FS

// Set is the module's images for the local node, written to one archive.
type Set struct {
	// Archive is the OCI layout tar to `ctr -n k8s.io images import`.
	Archive                                                               string
	Pause, Busybox, Agent, Webhook, StarrocksFE, StarrocksBE, StarrocksCN Built
	// Client is ClientRef; empty when this machine has no MariaDB client.
	Client Built
	// RealFEArchive holds the real FE image once UseRealFE put it in the
	// FE's place (StarrocksFE); it is kept in the tools cache.
	RealFEArchive string
}

// Archives are the archives to import into the node.
func (s *Set) Archives() []string {
	if s.RealFEArchive != "" {
		return []string{s.Archive, s.RealFEArchive}
	}
	return []string{s.Archive}
}

// UseRealFE makes the FE image of the set the real FE's (realfe.go),
// built from the FE at feHome and cached beside it.
func (s *Set) UseRealFE(feHome string) error {
	archive, built, err := RealFE(feHome, filepath.Dir(feHome))
	if err != nil {
		return fmt.Errorf("the real FE image: %w", err)
	}
	s.RealFEArchive, s.StarrocksFE = archive, built
	return nil
}

// ModulesImages is the local run's global.modulesImages: the module's
// images by digest in Registry, as lib-helm's helm_lib_module_image and the
// templates' ms.image read them.
func (s *Set) ModulesImages() map[string]any {
	return map[string]any{
		"registry": map[string]any{"base": Registry},
		"digests": map[string]any{"managedStarrocks": map[string]any{
			"agent":       s.Agent.Digest,
			"webhook":     s.Webhook.Digest,
			"starrocksFe": s.StarrocksFE.Digest,
			"starrocksBe": s.StarrocksBE.Digest,
			"starrocksCn": s.StarrocksCN.Digest,
		}},
	}
}

// Main packages built into the images: the module's own binaries with the
// flags werf uses (dev/scripts/build.sh), the stand-ins beside them.
const (
	pausePackage     = "./dev/cmd/pause"
	standinFEPackage = "./dev/cmd/fakefe"
	standinBEPackage = "./dev/cmd/fakebe"
)

// BuildSet builds the binaries into the repository's bin/images and writes
// dir/images.tar. dev/gobuild links them only when their code changed,
// where five links cost about 15 CPU-seconds every time a test or the
// local run needs the images.
func BuildSet(ctx context.Context, dir string) (*Set, error) {
	root := controlplane.RepoRoot()
	bin := filepath.Join(root, "bin", "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names := []string{"agent", "webhook", filepath.Base(pausePackage), filepath.Base(standinFEPackage), filepath.Base(standinBEPackage)}
	err := gobuild.Cached(ctx, "images", bin, names, func(cacheDir string) error {
		build := exec.CommandContext(ctx, "dev/scripts/build.sh", "agent", "webhook")
		build.Dir, build.Env = root, append(os.Environ(), "OUT_DIR="+cacheDir)
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("dev/scripts/build.sh: %w\n%s", err, out)
		}
		// One go build for the three stand-ins: it links them in parallel.
		standins := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", cacheDir+"/",
			pausePackage, standinFEPackage, standinBEPackage)
		standins.Dir, standins.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := standins.CombinedOutput(); err != nil {
			return fmt.Errorf("go build stand-ins: %w\n%s", err, out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	specs, err := setSpecs(root, bin)
	if err != nil {
		return nil, err
	}
	archive := filepath.Join(dir, "images.tar")
	built, err := Write(archive, specs...)
	if err != nil {
		return nil, err
	}
	set := &Set{Archive: archive, Pause: built[0], Busybox: built[1], Agent: built[2], Webhook: built[3],
		StarrocksFE: built[4], StarrocksBE: built[5], StarrocksCN: built[6]}
	if len(built) > 7 {
		set.Client = built[7]
	}
	return set, nil
}

// cnImage is the CN stand-in image of the layers shell and cn.
func cnImage(shell, cn []File) Image {
	return Image{Ref: Registry + ":starrocks-cn", Layers: [][]File{shell, cn}, WorkingDir: "/opt/starrocks", Cmd: []string{CNHome + "/bin/start_cn.sh"}}
}

// setSpecs lays the images out; the order is BuildSet's.
func setSpecs(root, bin string) ([]Image, error) {
	shell, err := BusyboxLayer(BusyboxPath)
	if err != nil {
		return nil, err
	}
	fe, err := feFiles(filepath.Join(bin, "fakefe"), filepath.Join(root, "images/starrocks-fe/fe-start.sh"))
	if err != nil {
		return nil, err
	}
	be, err := beFiles(filepath.Join(bin, "fakebe"), filepath.Join(root, "images/starrocks-be/be-start.sh"))
	if err != nil {
		return nil, err
	}
	cn, err := cnFiles(filepath.Join(bin, "fakebe"), filepath.Join(root, "images/starrocks-cn/cn-start.sh"))
	if err != nil {
		return nil, err
	}
	// The agent and webhook images are werf's (images/*/werf.inc.yaml): the
	// binary at /<name> as the entrypoint on a distroless base, no user (the
	// pod's securityContext sets it). The base's /etc/passwd and CA bundle
	// are not copied: the binaries look up no user and trust only the CAs
	// they are given.
	specs := []Image{
		{Ref: PauseRef, Layers: [][]File{{{Path: "/pause", Source: filepath.Join(bin, "pause")}}}, Entrypoint: []string{"/pause"}, User: "65535:65535"},
		{Ref: BusyboxRef, Layers: [][]File{shell}, Cmd: []string{"sh"}},
		{Ref: Registry + ":agent", Layers: [][]File{{{Path: "/agent", Source: filepath.Join(bin, "agent")}}}, Entrypoint: []string{"/agent"}},
		{Ref: Registry + ":webhook", Layers: [][]File{{{Path: "/webhook", Source: filepath.Join(bin, "webhook")}}}, Entrypoint: []string{"/webhook"}},
		{Ref: Registry + ":starrocks-fe", Layers: [][]File{shell, fe}, WorkingDir: "/opt/starrocks", Cmd: []string{FEHome + "/bin/start_fe.sh"}},
		{Ref: Registry + ":starrocks-be", Layers: [][]File{shell, be}, WorkingDir: "/opt/starrocks", Cmd: []string{BEHome + "/bin/start_be.sh", "--be"}},
		cnImage(shell, cn),
	}
	// The client image is for the user's recipes only; a machine without
	// the MariaDB client runs everything else.
	if _, err := os.Stat(MariaDBPath); err == nil {
		client, err := ClientLayer(MariaDBPath)
		if err != nil {
			return nil, err
		}
		specs = append(specs, Image{Ref: ClientRef, Layers: [][]File{shell, client}, Cmd: []string{"sh"}})
	}
	return specs, nil
}

// mysqlWrapper is the client image's mysql: the MariaDB client, given
// MySQL 8's --ssl-mode=VERIFY_IDENTITY as MariaDB's words for it (MariaDB's
// client has no --ssl-mode; --ssl --ssl-verify-server-cert verifies the
// chain against --ssl-ca and the host name), so the recipe written for
// mysql:8.4 runs as written. Any other --ssl-mode is refused rather than
// guessed.
const mysqlWrapper = `#!/bin/sh
# The local node's stand-in for mysql:8.4: Debian's MariaDB client (dev/images).
for arg; do
  shift
  case "$arg" in
    --ssl-mode=VERIFY_IDENTITY) set -- "$@" --ssl --ssl-verify-server-cert ;;
    --ssl-mode=*) echo "mysql: this local stand-in (MariaDB's client) translates only --ssl-mode=VERIFY_IDENTITY, not $arg" >&2; exit 2 ;;
    *) set -- "$@" "$arg" ;;
  esac
done
exec /usr/bin/mariadb "$@"
`

// ClientLayer is the MariaDB client at mariadb with the shared libraries
// ldd names for it (each at the path the loader looks it up by), and mysql
// as mysqlWrapper.
func ClientLayer(mariadb string) ([]File, error) {
	out, err := exec.Command("ldd", mariadb).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s (Debian package mariadb-client): %w", mariadb, err)
	}
	files := []File{
		{Path: "/usr/bin/mariadb", Source: mariadb},
		{Path: "/usr/bin/mysql", Data: []byte(mysqlWrapper), Mode: 0o755},
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "libssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x...)" or the
		// loader "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has no file.
		f := strings.Fields(line)
		lib := ""
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			lib = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			lib = f[0]
		default:
			continue
		}
		real, err := filepath.EvalSymlinks(lib)
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", mariadb, err)
		}
		files = append(files, File{Path: lib, Source: real, Mode: 0o755})
	}
	return files, nil
}

// feFiles is the FE stand-in's own layer: server is the stand-in binary,
// wrapper the module's fe-start.sh (images/starrocks-fe).
func feFiles(server, wrapper string) ([]File, error) {
	return starrocksLayer("fe", FEHome, server, []string{"bin", "conf", "meta", "log", "lib"},
		File{Path: FEHome + "/conf/fe.conf", Data: []byte(defaultFEConf), UID: starrocksUID, GID: starrocksUID},
		File{Path: FEStartWrapper, Source: wrapper},
		// The agent's shared emptyDir is mounted here (agent-run).
		File{Path: "/opt/starrocks/agent-run", Dir: true, UID: starrocksUID, GID: starrocksUID})
}

// beFiles is the BE stand-in's own layer: server is the stand-in binary,
// wrapper the module's be-start.sh (images/starrocks-be).
func beFiles(server, wrapper string) ([]File, error) {
	return starrocksLayer("be", BEHome, server, []string{"bin", "conf", "storage", "log", "lib"},
		File{Path: BEHome + "/conf/be.conf", Data: []byte(defaultBEConf), UID: starrocksUID, GID: starrocksUID},
		File{Path: BEStartWrapper, Source: wrapper},
		// be-ubuntu links cn to be (the same binary starts a CN).
		File{Path: "/opt/starrocks/cn", Link: "be"})
}

// cnFiles is the CN stand-in's own layer: the BE's release (upstream's
// cn-ubuntu is built from the BE's recipe) with conf/cn.conf, the CN's
// scripts beside the BE's, and the module's cn-start.sh (images/starrocks-cn)
// as wrapper. server is the BE stand-in binary, which --cn makes a CN.
func cnFiles(server, wrapper string) ([]File, error) {
	files, err := starrocksLayer("be", BEHome, server, []string{"bin", "conf", "storage", "log", "lib"},
		File{Path: BEHome + "/conf/be.conf", Data: []byte(defaultBEConf), UID: starrocksUID, GID: starrocksUID},
		File{Path: BEHome + "/conf/cn.conf", Data: []byte(defaultCNConf), UID: starrocksUID, GID: starrocksUID},
		File{Path: CNStartWrapper, Source: wrapper},
		File{Path: CNHome, Link: "be"})
	if err != nil {
		return nil, err
	}
	for _, s := range [][2]string{{"start_cn.sh", "start_cn.sh"}, {"stop_cn.sh", "stop.sh"}} {
		data, err := standinScripts.ReadFile("standin/" + s[1])
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: BEHome + "/bin/" + s[0], Data: data, Mode: 0o755})
	}
	return files, nil
}

// starrocksLayer is /opt/starrocks/<component> of a stand-in image: the
// directories the release has, owned by starrocks, the stand-in scripts in
// bin/, the stand-in server in lib/, and the users of the image.
func starrocksLayer(component, home, server string, dirs []string, extra ...File) ([]File, error) {
	files := []File{
		{Path: "/opt/starrocks", Dir: true, UID: starrocksUID, GID: starrocksUID},
		{Path: home, Dir: true, UID: starrocksUID, GID: starrocksUID},
		{Path: home + "/lib/starrocks-" + component + "-standin", Source: server},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\nstarrocks:x:1000:1000:StarRocks:/opt/starrocks:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")},
		{Path: "/etc/group", Data: []byte("root:x:0:\nstarrocks:x:1000:\nnogroup:x:65534:\n")},
	}
	for _, d := range dirs {
		files = append(files, File{Path: home + "/" + d, Dir: true, UID: starrocksUID, GID: starrocksUID})
	}
	// stop.sh is both stop scripts: its name in bin/ says which.
	for _, s := range [][2]string{{"start_" + component + ".sh", "start_" + component + ".sh"}, {"stop_" + component + ".sh", "stop.sh"}} {
		script, source := s[0], s[1]
		data, err := standinScripts.ReadFile("standin/" + source)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: home + "/bin/" + script, Data: data, Mode: 0o755})
	}
	return append(files, extra...), nil
}

// BusyboxLayer is Debian's static busybox at /bin/busybox with a link for
// each of its applets at the path `busybox --list-full` gives, /tmp, and
// /bin/bash: the templates' preStop hooks run /bin/bash -c (the upstream
// images have bash) and busybox has no bash applet, so /bin/bash is a
// script that hands its arguments to busybox's sh (ash), which runs those
// one-line commands the same way.
func BusyboxLayer(busybox string) ([]File, error) {
	out, err := exec.Command(busybox, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-full (Debian package busybox-static): %w", busybox, err)
	}
	files := []File{
		{Path: "/bin/busybox", Source: busybox},
		{Path: "/bin/bash", Data: []byte("#!/bin/sh\n# busybox has no bash: its sh runs the preStop one-liners (dev/images).\nexec /bin/sh \"$@\"\n"), Mode: 0o755},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
	}
	seen := map[string]bool{"/bin/busybox": true, "/bin/bash": true}
	for _, line := range strings.Fields(string(out)) {
		p := path.Clean("/" + line)
		if seen[p] {
			continue
		}
		seen[p] = true
		rel, err := filepath.Rel(path.Dir(p), "/bin/busybox")
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p, Link: rel})
	}
	return files, nil
}

// The stand-ins' default configuration files, as the release ships one:
// the pods mount the rendered ones over them (fe-start.sh copies fe.conf into
// conf/; be.conf is a subPath mount).
const defaultFEConf = `# Stand-in FE configuration (dev/images); the pod's fe-start.sh replaces it.
http_port = 8030
rpc_port = 9020
query_port = 9030
edit_log_port = 9010
meta_dir = ${STARROCKS_HOME}/meta
`

const defaultBEConf = `# Stand-in BE configuration (dev/images); the pod mounts the rendered one over it.
be_port = 9060
be_http_port = 8040
heartbeat_service_port = 9050
brpc_port = 8060
storage_root_path = ${STARROCKS_HOME}/storage
`

// defaultCNConf names the ports as the operator's and StarRocks' docs'
// cn.conf do (thrift_port, webserver_port; the stand-in reads both names).
const defaultCNConf = `# Stand-in CN configuration (dev/images); the pod mounts the rendered one over it.
thrift_port = 9060
webserver_port = 8040
heartbeat_service_port = 9050
brpc_port = 8060
starlet_port = 9070
storage_root_path = ${STARROCKS_HOME}/storage
`

// StandinPaths lists every path of the FE ("fe"), BE ("be") or CN ("cn") stand-in
// image, directories included, without building anything: a test holds the
// templates' commands, probes and preStop hooks to them.
func StandinPaths(component string) ([]string, error) {
	shell, err := BusyboxLayer(BusyboxPath)
	if err != nil {
		return nil, err
	}
	var own []File
	switch component {
	case "fe":
		own, err = feFiles("", "")
	case "be":
		own, err = beFiles("", "")
	case "cn":
		own, err = cnFiles("", "")
	default:
		return nil, fmt.Errorf("component %q: want fe, be or cn", component)
	}
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		for ; p != "/" && !seen[p]; p = path.Dir(p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	all := append(shell, own...)
	for _, f := range all {
		add(f.Path)
	}
	// A link to a directory of the image (/opt/starrocks/cn -> be) reaches
	// everything under it by its own name too: the CN's pod names the
	// release by the link, as upstream's operator does.
	for _, l := range all {
		if l.Link == "" || path.IsAbs(l.Link) {
			continue
		}
		target := path.Join(path.Dir(l.Path), l.Link)
		for _, f := range all {
			if rest, ok := strings.CutPrefix(f.Path, target+"/"); ok {
				add(l.Path + "/" + rest)
			}
		}
	}
	return out, nil
}

// Import loads an archive into the k8s.io namespace (the CRI's) of the
// containerd at address with its ctr (Debian package containerd), unpacked
// with snapshotter ("" for containerd's default, the CRI's overlayfs).
func Import(ctx context.Context, address, snapshotter, archive string) error {
	args := []string{"--address", address, "--namespace", "k8s.io", "images", "import"}
	if snapshotter != "" {
		args = append(args, "--snapshotter", snapshotter)
	}
	out, err := exec.CommandContext(ctx, "ctr", append(args, archive)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w\n%s", archive, err, out)
	}
	return nil
}
