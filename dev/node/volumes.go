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
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// StorageClass is the node's default StorageClass: a PersistentVolumeClaim
// of it (or of no class) gets a hostPath volume in the run directory, bound
// to the claim, so StatefulSets' volumeClaimTemplates work on the node.
const (
	StorageClass = "local-node"
	provisioner  = "dev.managed-starrocks.invalid/local-node"
)

// startVolumes creates the StorageClass and provisions volumes for pending
// claims until ctx ends. A claim's folder is world-writable: a hostPath
// volume takes no fsGroup, and the StarRocks containers run as uid 1000.
func (n *Node) startVolumes(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(n.cp.RESTConfig())
	if err != nil {
		return err
	}
	binding := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: StorageClass, Annotations: map[string]string{
			"storageclass.kubernetes.io/is-default-class": "true",
		}},
		Provisioner:       provisioner,
		VolumeBindingMode: &binding,
	}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create StorageClass %s: %w", StorageClass, err)
	}
	n.volumesWG.Add(1)
	go func() {
		defer n.volumesWG.Done()
		for {
			if err := n.provision(ctx, cs); err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "node: volumes: %v\n", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return nil
}

func (n *Node) provision(ctx context.Context, cs kubernetes.Interface) error {
	pvcs, err := cs.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, pvc := range pvcs.Items {
		if pvc.Spec.VolumeName != "" || pvc.Status.Phase != corev1.ClaimPending ||
			pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != StorageClass {
			continue
		}
		name := "local-" + string(pvc.UID)
		path := filepath.Join(n.dir, "volumes", pvc.Namespace+"_"+pvc.Name)
		if err := os.MkdirAll(path, 0o777); err != nil {
			return err
		}
		if err := os.Chmod(path, 0o777); err != nil {
			return err
		}
		hostPathType := corev1.HostPathDirectory
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
				AccessModes:                   pvc.Spec.AccessModes,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              StorageClass,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &hostPathType}},
			},
		}
		if _, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create volume for %s/%s: %w", pvc.Namespace, pvc.Name, err)
		}
	}
	return nil
}
