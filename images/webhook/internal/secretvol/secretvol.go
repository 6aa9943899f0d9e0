// Package secretvol lays out key pairs the way the kubelet fills a Secret
// volume, for tests of certificate reload. Only tests import it; nothing in
// the shipped webhook does.
package secretvol

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

// Issue signs a webhook serving certificate for 127.0.0.1 and the in-cluster
// Service names.
func Issue(t testing.TB, ca *testpki.CA) *testpki.Leaf {
	t.Helper()
	leaf, err := ca.Issue("managed-starrocks-webhook",
		[]string{"localhost", "managed-starrocks-webhook", "managed-starrocks-webhook.d8-managed-starrocks.svc"},
		[]net.IP{net.ParseIP("127.0.0.1")}, 0)
	if err != nil {
		t.Fatalf("issue serving certificate: %v", err)
	}
	return leaf
}

// NewCA makes a test CA or fails the test.
func NewCA(t testing.TB) *testpki.CA {
	t.Helper()
	ca, err := testpki.NewCA("managed-starrocks-webhook test CA")
	if err != nil {
		t.Fatalf("create CA: %v", err)
	}
	return ca
}

// Dir is a Secret volume: tls.crt and tls.key are symlinks through `..data`,
// which points to a timestamped directory and is swapped atomically.
type Dir struct {
	Path string
	t    testing.TB
	gen  int
}

// New creates the volume holding a first key pair.
func New(t testing.TB, certPEM, keyPEM []byte) *Dir {
	t.Helper()
	d := &Dir{Path: t.TempDir(), t: t}
	d.Update(certPEM, keyPEM)
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(d.Path, name)); err != nil {
			t.Fatalf("link %s: %v", name, err)
		}
	}
	return d
}

// Update swaps in a new key pair the way the kubelet does: write a new
// directory, then rename a fresh symlink over `..data`.
func (d *Dir) Update(certPEM, keyPEM []byte) {
	d.t.Helper()
	d.gen++
	ts := filepath.Join(d.Path, fmt.Sprintf("..ts%d", d.gen))
	if err := os.Mkdir(ts, 0o755); err != nil {
		d.t.Fatalf("mkdir %s: %v", ts, err)
	}
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(ts, name), data, 0o600); err != nil {
			d.t.Fatalf("write %s: %v", name, err)
		}
	}
	tmp := filepath.Join(d.Path, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		d.t.Fatalf("link ..data_tmp: %v", err)
	}
	if err := os.Rename(tmp, filepath.Join(d.Path, "..data")); err != nil {
		d.t.Fatalf("swap ..data: %v", err)
	}
}

// CertFile and KeyFile are the paths a server is given.
func (d *Dir) CertFile() string { return filepath.Join(d.Path, "tls.crt") }
func (d *Dir) KeyFile() string  { return filepath.Join(d.Path, "tls.key") }
