//go:build tools

// Package deps keeps every library the module's packages use in go.mod while
// those packages are being written. Development only.
package deps

import (
	_ "github.com/deckhouse/module-sdk/common-hooks/tls-certificate"
	_ "github.com/deckhouse/module-sdk/pkg"
	_ "github.com/deckhouse/module-sdk/pkg/app"
	_ "github.com/deckhouse/module-sdk/pkg/registry"
	_ "github.com/deckhouse/module-sdk/testing/mock"
	_ "github.com/flant/addon-operator/pkg/module_manager/models/hooks/kind"
	_ "github.com/flant/addon-operator/pkg/utils"
	_ "github.com/flant/addon-operator/pkg/values/validation"
	_ "github.com/flant/shell-operator/pkg/hook/binding_context"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/go-sql-driver/mysql"
	_ "github.com/google/cel-go/cel"
	_ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	_ "github.com/prometheus/prometheus/model/rulefmt"
	_ "github.com/prometheus/prometheus/promql/parser"
	_ "github.com/prometheus/prometheus/promql/promqltest"
	_ "github.com/prometheus/prometheus/rules"
	_ "github.com/stretchr/testify/require"
	_ "helm.sh/helm/v3/pkg/chart/loader"
	_ "helm.sh/helm/v3/pkg/chartutil"
	_ "helm.sh/helm/v3/pkg/engine"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	_ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/controller-runtime/pkg/client"
	_ "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	_ "sigs.k8s.io/yaml"
	_ "vitess.io/vitess/go/mysql"
)
