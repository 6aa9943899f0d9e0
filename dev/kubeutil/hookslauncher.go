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

package kubeutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// HooksLauncher writes, into dir, a kubeconfig for cfg and an executable
// that runs the hooks binary with KUBECONFIG pointing at it, and returns the
// executable's path. The hooks write into tenant namespaces with their own
// client (hooks/internal/kubewrite), which reads KUBECONFIG when not in a
// pod; addon-operator's batch-hook runner hands a hook its own process
// environment, which tests running several control planes at once cannot
// set per cluster. So each cluster gets a launcher of its own.
func HooksLauncher(dir, binary string, cfg *rest.Config) (string, error) {
	kubeconfig := filepath.Join(dir, "hooks.kubeconfig")
	if err := WriteKubeconfig(kubeconfig, cfg); err != nil {
		return "", fmt.Errorf("write the hooks' kubeconfig: %w", err)
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", err
	}
	launcher := filepath.Join(dir, "hooks")
	script := "#!/bin/sh\nKUBECONFIG=" + strconv.Quote(kubeconfig) + " exec " + strconv.Quote(abs) + " \"$@\"\n"
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		return "", fmt.Errorf("write the hooks launcher: %w", err)
	}
	return launcher, nil
}

// WriteKubeconfig writes a kubeconfig file at path that connects as cfg
// does: its server, CA and credentials (token, client certificate or
// impersonated user).
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile, Impersonate: cfg.Impersonate.UserName,
	}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user"}
	kc.CurrentContext = "local"
	return clientcmd.WriteToFile(*kc, path)
}
