package controlplane_test

import (
	"context"
	"testing"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestStartsServesAndStops(t *testing.T) {
	cp := controlplane.StartForTest(t, controlplane.Options{})
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.GitVersion != "v1.36.3" {
		t.Errorf("server version %q, want v1.36.3", v.GitVersion)
	}
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), "no-such-namespace", metav1.GetOptions{})
	if !errors.IsNotFound(err) {
		t.Errorf("get missing namespace: %v, want NotFound", err)
	}
	cp.Stop()
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Error("apiserver still answers after Stop")
	}
}
