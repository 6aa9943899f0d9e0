package moduleloop

import (
	"context"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/dev/controlplane"
	"github.com/deckhouse/managed-starrocks/dev/kubeutil"
)

// CRDDirs are the CRDs a Deckhouse cluster has that the module's objects
// need: the module's own, cert-manager's, prometheus-operator's and the
// Deckhouse fixtures in dev/crds.
func CRDDirs() ([]string, error) {
	certManager, err := controlplane.Tool("cert-manager-crds")
	if err != nil {
		return nil, err
	}
	prometheusOperator, err := controlplane.Tool("prometheus-operator-crds")
	if err != nil {
		return nil, err
	}
	return []string{
		controlplane.ModuleCRDDir(),
		certManager,
		prometheusOperator,
		filepath.Join(controlplane.RepoRoot(), "dev", "crds"),
	}, nil
}

// DeckhouseNamespaces exist in every Deckhouse cluster the module runs in;
// the module's objects refer to them (the CA of the module's ClusterIssuer
// lives in cert-manager's namespace).
var DeckhouseNamespaces = []string{"d8-cert-manager", "d8-monitoring"}

// PrepareCluster creates what Deckhouse itself would provide.
func PrepareCluster(ctx context.Context, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, name := range DeckhouseNamespaces {
		if err := kubeutil.EnsureNamespace(ctx, kube, name, map[string]string{"heritage": "deckhouse"}); err != nil {
			return err
		}
	}
	return nil
}
