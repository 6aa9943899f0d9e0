package main

import (
	"bytes"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// kubectlFatal stops a kubectl command where the real binary would exit.
type kubectlFatal struct{}

// kubectlResult is what a user sees: stdout, and on failure the text kubectl
// writes to stderr before exiting (without its trailing newline).
type kubectlResult struct {
	Out    string
	Failed bool
	Err    string
}

// kubectl runs a kubectl command in-process with kubectl's own code
// (k8s.io/kubectl, the same release as the apiserver libraries): its error
// text is exactly what `kubectl ...` prints, which the docs quote. The
// command runs in dir, so file arguments appear in messages as written.
func kubectl(t *testing.T, kubeconfig, dir string, args ...string) kubectlResult {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("KUBERC", "off")
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := kubectlcmd.NewKubectlCommand(kubectlcmd.KubectlOptions{Arguments: append([]string{"kubectl"}, args...), IOStreams: streams})
	cmd.SetArgs(append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + t.TempDir()}, args...))
	cmd.SetOut(out)
	cmd.SetErr(errOut)

	res := kubectlResult{}
	cmdutil.BehaviorOnFatal(func(msg string, _ int) {
		res.Failed, res.Err = true, msg
		panic(kubectlFatal{})
	})
	defer cmdutil.DefaultBehaviorOnFatal()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(kubectlFatal); !ok {
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
