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

package node

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
)

// FailureDirEnv names a directory where a failed test's node leaves what
// explains the failure: the whole logs of its processes (kube-router's
// among them), every container's log (all restarts: the kubelet's pod
// log directory), the pods and events of every namespace, and the
// NetworkPolicy state (kube-router's iptables chains, the ipsets). The run
// directory itself goes with the test.
const FailureDirEnv = "MANAGED_STARROCKS_NODE_FAILURE_DIR"

// dumpForFailure copies that into $FailureDirEnv/<test name>-<time> when
// the variable is set; it returns the directory, or "" when not set.
func (n *Node) dumpForFailure(cp *controlplane.ControlPlane, test string) (string, error) {
	root := os.Getenv(FailureDirEnv)
	if root == "" {
		return "", nil
	}
	dir := filepath.Join(root, filepath.Base(filepath.Clean("/"+test))+"-"+time.Now().UTC().Format("150405"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	copyFile := func(from string) {
		if data, err := os.ReadFile(from); err == nil {
			_ = os.WriteFile(filepath.Join(dir, filepath.Base(from)), data, 0o600)
		}
	}
	for _, p := range n.procs {
		copyFile(p.log)
	}
	copyFile(filepath.Join(cp.Dir(), "kube-apiserver.log"))
	copyFile(filepath.Join(cp.Dir(), "kube-controller-manager.log"))
	_ = exec.Command("cp", "-r", filepath.Join(n.dir, "pod-logs"), filepath.Join(dir, "pod-logs")).Run()
	commands := map[string][]string{
		"iptables-filter.txt": {"iptables-save", "-t", "filter"},
		"iptables-nat.txt":    {"iptables-save", "-t", "nat"},
		"ipsets.txt":          {"ipset", "list"},
	}
	for file, argv := range commands {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err == nil {
			_ = os.WriteFile(filepath.Join(dir, file), out, 0o600)
		}
	}
	kube, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return dir, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	save := func(file string, obj any, err error) {
		if err != nil {
			return
		}
		if data, err := json.MarshalIndent(obj, "", " "); err == nil {
			_ = os.WriteFile(filepath.Join(dir, file), data, 0o600)
		}
	}
	pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	save("pods.json", pods, err)
	events, err := kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	save("events.json", events, err)
	policies, err := kube.NetworkingV1().NetworkPolicies("").List(ctx, metav1.ListOptions{})
	save("networkpolicies.json", policies, err)
	endpoints, err := kube.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	save("endpointslices.json", endpoints, err)
	return dir, nil
}
