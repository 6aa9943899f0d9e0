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

package certmanager

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// The chain the module renders for an instance (pkg/instanceobjects
// certificate.yaml): a CA Certificate from the module's SelfSigned
// ClusterIssuer, a CA Issuer on its Secret, and the instance's Certificate
// with a PKCS12 keystore.
const objects = `
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: selfsigned}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: sr-ca, namespace: team-a}
spec:
  isCA: true
  commonName: sr-ca
  secretName: sr-ca
  privateKey: {algorithm: ECDSA, size: 256}
  issuerRef: {group: cert-manager.io, kind: ClusterIssuer, name: selfsigned}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: sr-ca, namespace: team-a}
spec: {ca: {secretName: sr-ca}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: sr, namespace: team-a}
spec:
  secretName: sr-tls
  duration: 2160h
  renewBefore: 720h
  dnsNames: [sr-fe.team-a.svc.cluster.local]
  usages: [server auth, digital signature, key encipherment]
  privateKey: {algorithm: RSA, size: 2048, rotationPolicy: Always}
  issuerRef: {group: cert-manager.io, kind: Issuer, name: sr-ca}
  keystores:
    pkcs12:
      create: true
      passwordSecretRef: {name: sr-keystore, key: password}
`

func TestCAIssuerCertificateIsIssuedAndRenewed(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{CRDDirs: []string{controlplane.CertManagerCRDDir()}})
	StartForTest(t, cp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kube := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets("team-a").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sr-keystore"},
		StringData: map[string]string{"password": "keystore-password"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split([]byte(objects), []byte("\n---\n")) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: map[string]string{
			"ClusterIssuer": "clusterissuers", "Issuer": "issuers", "Certificate": "certificates"}[u.GetKind()]}
		var err error
		if u.GetNamespace() == "" {
			_, err = dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
		} else {
			_, err = dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	start := time.Now()
	first := waitSecret(ctx, t, kube, nil)
	t.Logf("issued in %s", time.Since(start).Round(time.Millisecond))
	for _, key := range []string{"tls.crt", "tls.key", "ca.crt", "keystore.p12"} {
		if len(first.Data[key]) == 0 {
			t.Errorf("Secret sr-tls has no %s (keys: %v)", key, keys(first))
		}
	}
	leaf, roots := parse(t, first.Data["tls.crt"]), x509.NewCertPool()
	roots.AppendCertsFromPEM(first.Data["ca.crt"])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "sr-fe.team-a.svc.cluster.local"}); err != nil {
		t.Errorf("tls.crt does not verify against ca.crt for its DNS name: %v", err)
	}
	// cert-manager may issue more than once before it settles (a warm
	// .ci/run found the Certificate at revision 2 before any renewal): the
	// renewal is judged against the revision and the Secret it settled on.
	settled := waitRevision(ctx, t, dyn, 1)
	first, err := kube.CoreV1().Secrets("team-a").Get(ctx, "sr-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf = parse(t, first.Data["tls.crt"])
	if err := Renew(ctx, dyn, "team-a", "sr"); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	second := waitSecret(ctx, t, kube, first.Data["tls.crt"])
	t.Logf("re-issued in %s", time.Since(start).Round(time.Millisecond))
	if renewed := parse(t, second.Data["tls.crt"]); renewed.SerialNumber.Cmp(leaf.SerialNumber) == 0 || bytes.Equal(second.Data["tls.key"], first.Data["tls.key"]) {
		t.Errorf("renewal kept the serial or the key (rotationPolicy: Always)")
	}
	// Judged on the renewed Secret: cert-manager may issue the CA
	// Certificate twice at its start too (a cold .ci/run found sr-ca at
	// revision 2 after the first leaf was signed by revision 1), and a
	// leaf keeps the ca.crt it was signed with until it is re-issued.
	caSecret, err := kube.CoreV1().Secrets("team-a").Get(ctx, "sr-ca", metav1.GetOptions{})
	if err != nil || !bytes.Equal(caSecret.Data["tls.crt"], second.Data["ca.crt"]) {
		t.Errorf("ca.crt is not the CA Certificate's certificate (%v)", err)
	}
	waitRevision(ctx, t, dyn, settled+1)
}

// waitRevision waits until Certificate sr is Ready at revision rev or a
// later one and no longer issuing, and returns that revision.
func waitRevision(ctx context.Context, t *testing.T, dyn dynamic.Interface, rev int64) int64 {
	t.Helper()
	for {
		cert, err := dyn.Resource(Certificates).Namespace("team-a").Get(ctx, "sr", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedInt64(cert.Object, "status", "revision")
		conds, _, _ := unstructured.NestedSlice(cert.Object, "status", "conditions")
		ready, issuing := false, false
		for _, c := range conds {
			m, _ := c.(map[string]any)
			ready = ready || m["type"] == "Ready" && m["status"] == "True"
			issuing = issuing || m["type"] == "Issuing" && m["status"] == "True"
		}
		if got >= rev && ready && !issuing {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Certificate sr not Ready at revision %d: %v", rev, cert.Object["status"])
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitSecret waits until Secret sr-tls holds a certificate other than not.
func waitSecret(ctx context.Context, t *testing.T, kube kubernetes.Interface, not []byte) *corev1.Secret {
	t.Helper()
	for {
		s, err := kube.CoreV1().Secrets("team-a").Get(ctx, "sr-tls", metav1.GetOptions{})
		if err == nil && len(s.Data["tls.crt"]) > 0 && !bytes.Equal(s.Data["tls.crt"], not) {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Secret sr-tls not issued: %v (last error %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func parse(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("no PEM block in %q", data)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func keys(s *corev1.Secret) []string {
	var out []string
	for k := range s.Data {
		out = append(out, k)
	}
	return out
}
