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
)

var (
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}
	StarrocksGVR       = SchemeGroupVersion.WithResource(StarrocksResource)
	StarrocksClassGVR  = SchemeGroupVersion.WithResource(ClassResource)

	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	AddToScheme   = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Starrocks{}, &StarrocksList{},
		&StarrocksClass{}, &StarrocksClassList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
