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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	// GroupName is the API group shared by the Deckhouse managed services.
	GroupName = "managed-services.deckhouse.io"
	Version   = "v1alpha1"

	StarrocksKind      = "Starrocks"
	StarrocksClassKind = "StarrocksClass"
	StarrocksResource  = "starrocks"
	ClassResource      = "starrocksclasses"
	BackupKind         = "StarrocksBackup"
	BackupResource     = "starrocksbackups"
)

var (
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}
	StarrocksGVR       = SchemeGroupVersion.WithResource(StarrocksResource)
	StarrocksClassGVR  = SchemeGroupVersion.WithResource(ClassResource)
	StarrocksBackupGVR = SchemeGroupVersion.WithResource(BackupResource)

	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Starrocks{}, &StarrocksList{},
		&StarrocksClass{}, &StarrocksClassList{},
		&StarrocksBackup{}, &StarrocksBackupList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
