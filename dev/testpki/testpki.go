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

// Package testpki issues throwaway certificates for tests and the local
// control plane: a CA and leaf certificates signed by it, and a mimic of the
// Secret volume the kubelet mounts them through. Never shipped.
//
// Every key is ECDSA P-256: the MariaDB and fake-FE TLS tests, the agent and
// the webhook all accept it, and it is fast enough to issue one per
// benchmark iteration.
package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority held in memory.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// Leaf is an issued certificate with its key, PEM encoded.
type Leaf struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA creates a self-signed CA valid for a day.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	cert, certPEM, err := sign(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate %s: %w", commonName, err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM}, nil
}

// MustCA is NewCA for tests: it fails t instead of returning an error.
func MustCA(t testing.TB, commonName string) *CA {
	t.Helper()
	ca, err := NewCA(commonName)
	if err != nil {
		t.Fatalf("testpki: %v", err)
	}
	return ca
}

// Issue signs a server and client certificate for the given DNS names and
// IP addresses, valid for the given duration (a day when zero).
func (ca *CA) Issue(commonName string, dnsNames []string, ips []net.IP, validFor time.Duration) (*Leaf, error) {
	if validFor == 0 {
		validFor = 24 * time.Hour
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key for %s: %w", commonName, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	cert, certPEM, err := sign(tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("issue certificate for %s: %w", commonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key for %s: %w", commonName, err)
	}
	return &Leaf{
		Cert:    cert,
		CertPEM: certPEM,
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// MustIssue is Issue for tests: a certificate named after the first DNS name,
// valid for those names and 127.0.0.1 (tests dial loopback), for a day. It
// fails t instead of returning an error.
func (ca *CA) MustIssue(t testing.TB, dnsNames ...string) *Leaf {
	t.Helper()
	if len(dnsNames) == 0 {
		t.Fatalf("testpki: MustIssue needs at least one DNS name")
	}
	leaf, err := ca.Issue(dnsNames[0], dnsNames, []net.IP{net.ParseIP("127.0.0.1")}, 0)
	if err != nil {
		t.Fatalf("testpki: %v", err)
	}
	return leaf
}

// TLSCertificate returns the leaf as a key pair for a tls.Config.
func (l *Leaf) TLSCertificate() (tls.Certificate, error) {
	c, err := tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load key pair of %s: %w", l.Cert.Subject.CommonName, err)
	}
	return c, nil
}

// SecretData is the data of the kubernetes.io/tls Secret cert-manager would
// write for this leaf: tls.crt, tls.key and ca.crt.
func (l *Leaf) SecretData(ca *CA) map[string][]byte {
	return map[string][]byte{"tls.crt": l.CertPEM, "tls.key": l.KeyPEM, "ca.crt": ca.CertPEM}
}

// WriteFiles writes tls.crt, tls.key and ca.crt into dir as plain files (no
// ..data indirection; see SecretVolume for that).
func (l *Leaf) WriteFiles(dir string, ca *CA) error {
	for name, data := range l.SecretData(ca) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, []byte, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parse the certificate just created: %w", err)
	}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}
