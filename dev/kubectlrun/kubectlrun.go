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

// Package kubectlrun runs kubectl commands in-process with kubectl's own code
// (k8s.io/kubectl, the same release as the apiserver libraries), so tests see
// exactly what a user sees: what docs quote, what `kubectl get` and `kubectl
// explain` print.
package kubectlrun

import (
	"bytes"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// fatal stops a kubectl command where the real binary would exit.
type fatal struct{}

// Result is what a user sees: stdout, and on failure the text kubectl
// writes to stderr before exiting (without its trailing newline).
type Result struct {
	Out    string
	Failed bool
	Err    string
}

// Run runs `kubectl args...` against the cluster of kubeconfig. The command
// runs in dir (t.Chdir: not for parallel tests), so file arguments appear in
// messages as written.
func Run(t *testing.T, kubeconfig, dir string, args ...string) Result {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("KUBERC", "off")
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := kubectlcmd.NewKubectlCommand(kubectlcmd.KubectlOptions{Arguments: append([]string{"kubectl"}, args...), IOStreams: streams})
	cmd.SetArgs(append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + t.TempDir()}, args...))
	cmd.SetOut(out)
	cmd.SetErr(errOut)

	res := Result{}
	cmdutil.BehaviorOnFatal(func(msg string, _ int) {
		res.Failed, res.Err = true, msg
		panic(fatal{})
	})
	defer cmdutil.DefaultBehaviorOnFatal()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fatal); !ok {
					panic(r)
				}
			}
		}()
		if err := cmd.Execute(); err != nil {
			res.Failed, res.Err = true, err.Error()
		}
	}()
	res.Out = out.String()
	res.Err = string(bytes.TrimRight([]byte(res.Err), "\n"))
	return res
}
