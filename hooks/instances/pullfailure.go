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

package instances

import (
	"fmt"
	"sort"
)

// The kubelet's waiting reasons of a container whose image it cannot pull
// (k8s.io/kubernetes pkg/kubelet/images: ErrImagePull on a failed pull,
// ImagePullBackOff while it waits to try again).
const (
	waitingErrImagePull     = "ErrImagePull"
	waitingImagePullBackOff = "ImagePullBackOff"
)

// ReasonImagePullFailed: Available is False because a pod's image cannot be
// pulled. The instance pods carry no imagePullSecrets: the nodes' container
// runtime pulls with the credentials Deckhouse's node configuration gives
// it, which cover the platform's registry, not a ModuleSource on another
// host or with other credentials (docs/ADMIN_GUIDE.md "Images from a
// ModuleSource").
const ReasonImagePullFailed = "ImagePullFailed"

// PullFailure is a container whose image the kubelet cannot pull, as the
// pod's status says.
type PullFailure struct {
	Container string `json:"container"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
}

// pullFailure is the first pod of the instance (by name) that cannot pull
// an image, with its failure; "" and nil when none.
func pullFailure(o *rolloutObservation) (string, *PullFailure) {
	if o == nil {
		return "", nil
	}
	var pods []RolloutPodSnap
	for _, p := range o.frontends {
		pods = append(pods, p)
	}
	for _, p := range o.backends {
		pods = append(pods, p)
	}
	for _, p := range o.computes {
		pods = append(pods, p)
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, p := range pods {
		if p.PullFailure != nil {
			return p.Name, p.PullFailure
		}
	}
	return "", nil
}

// pullFailureMessage names the pod, the container, the kubelet's words and
// the likely cause.
func pullFailureMessage(pod string, f *PullFailure) string {
	return fmt.Sprintf("Pod %s cannot pull the image of container %s (%s): %s. The instance's pods pull with the nodes' registry credentials only; "+
		"if the module comes from a ModuleSource whose registry the nodes have no credentials for, the cluster administrator gives them "+
		"(docs: the admin guide's \"Images from a ModuleSource\").", pod, f.Container, f.Reason, f.Message)
}
