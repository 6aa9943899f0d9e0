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

package controlplane

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/deckhouse/managed-starrocks/dev/testpki"
)

// pki is what the apiserver needs to serve and to authenticate the admin.
type pki struct {
	caPEM       []byte
	caFile      string
	servingCert string
	servingKey  string
	saKey       string
	tokenFile   string
	token       string
	// controllerToken is kube-controller-manager's: the user
	// system:kube-controller-manager, as in a real cluster (kubeadm's
	// client certificate), which Deckhouse's policies exclude by name.
	controllerToken string
	// With a node: the node's identities' tokens by user name, and the client
	// certificate the apiserver shows the kubelet.
	userTokens        map[string]string
	kubeletClientCert string
	kubeletClientKey  string
	// With a node: the front proxy's CA and the client certificate the
	// apiserver's aggregator shows an extension apiserver (metrics-server),
	// which trusts the user it names in X-Remote-User because that CA
	// signed it (the requestheader flags).
	frontProxyCAFile     string
	frontProxyClientCert string
	frontProxyClientKey  string
}

func writePKI(dir string, node *NodeOptions) (*pki, error) {
	ca, err := testpki.NewCA("managed-starrocks local control plane CA")
	if err != nil {
		return nil, err
	}
	ips := []net.IP{net.ParseIP("127.0.0.1")}
	if node != nil {
		// Pods dial the kubernetes Service's address (KUBERNETES_SERVICE_HOST)
		// and reach the apiserver through the advertised address.
		first, err := firstServiceIP(node.ServiceCIDR)
		if err != nil {
			return nil, err
		}
		ips = append(ips, first, net.ParseIP(node.AdvertiseAddress))
	}
	leaf, err := ca.Issue("kube-apiserver", []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		ips, 0)
	if err != nil {
		return nil, err
	}
	p := &pki{
		caPEM:       ca.CertPEM,
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "service-account.key"),
		tokenFile:   filepath.Join(dir, "tokens.csv"),
		caFile:      filepath.Join(dir, "ca.crt"),
	}
	if err := os.WriteFile(p.caFile, ca.CertPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.servingCert, leaf.CertPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.servingKey, leaf.KeyPEM, 0o600); err != nil {
		return nil, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	if err := writePEMKey(p.saKey, saKey); err != nil {
		return nil, err
	}
	if p.token, err = randomToken(); err != nil {
		return nil, err
	}
	if p.controllerToken, err = randomToken(); err != nil {
		return nil, err
	}
	// token,user,uid,"group": system:masters is cluster-admin without RBAC
	// objects. kube-controller-manager gets it too so that its start does
	// not wait for the bootstrap RBAC; its controllers act as their own
	// service accounts in kube-system (--use-service-account-credentials).
	line := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n%s,system:kube-controller-manager,system:kube-controller-manager,\"system:masters\"\n",
		p.token, p.controllerToken)
	if node != nil {
		p.userTokens = map[string]string{}
		users := []struct{ name, group string }{
			{"system:node:" + node.Name, "system:nodes"},
			// The apiserver's default ClusterRoleBindings bind these users
			// (system:node-proxier, system:kube-scheduler).
			{"system:kube-proxy", ""},
			{"system:kube-scheduler", ""},
		}
		for _, u := range users {
			tok, err := randomToken()
			if err != nil {
				return nil, err
			}
			p.userTokens[u.name] = tok
			line += fmt.Sprintf("%s,%s,%s,\"%s\"\n", tok, u.name, u.name, u.group)
		}
		client, err := ca.Issue("kube-apiserver-kubelet-client", nil, nil, 0)
		if err != nil {
			return nil, err
		}
		p.kubeletClientCert = filepath.Join(dir, "kubelet-client.crt")
		p.kubeletClientKey = filepath.Join(dir, "kubelet-client.key")
		if err := os.WriteFile(p.kubeletClientCert, client.CertPEM, 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p.kubeletClientKey, client.KeyPEM, 0o600); err != nil {
			return nil, err
		}
		if err := p.writeFrontProxy(dir); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(p.tokenFile, []byte(line), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// writeFrontProxy writes a CA of its own for the aggregator's client
// certificate, as kubeadm does (front-proxy-ca): a certificate of the main CA
// would let any of the node's client certificates assert a user to an
// extension apiserver.
func (p *pki) writeFrontProxy(dir string) error {
	ca, err := testpki.NewCA("managed-starrocks local front-proxy CA")
	if err != nil {
		return err
	}
	client, err := ca.Issue(frontProxyClientName, nil, nil, 0)
	if err != nil {
		return err
	}
	p.frontProxyCAFile = filepath.Join(dir, "front-proxy-ca.crt")
	p.frontProxyClientCert = filepath.Join(dir, "front-proxy-client.crt")
	p.frontProxyClientKey = filepath.Join(dir, "front-proxy-client.key")
	for path, data := range map[string][]byte{p.frontProxyCAFile: ca.CertPEM, p.frontProxyClientCert: client.CertPEM, p.frontProxyClientKey: client.KeyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// frontProxyClientName is the aggregator's client certificate's common name,
// the one --requestheader-allowed-names accepts.
const frontProxyClientName = "front-proxy-client"

// firstServiceIP is the address the apiserver gives the kubernetes Service:
// the first one after the network address of the Service range.
func firstServiceIP(cidr string) (net.IP, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil || n.IP.To4() == nil {
		return nil, fmt.Errorf("service CIDR %q: want an IPv4 CIDR", cidr)
	}
	ip := append(net.IP(nil), n.IP.To4()...)
	ip[3]++
	return ip, nil
}
