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

// Command cert-manager-controller runs the controllers of the real
// cert-manager (github.com/cert-manager/cert-manager, the version pinned in
// this module's go.mod) that the local control plane needs to issue the
// module's certificates: Certificates (trigger, key manager, request manager,
// issuing, readiness, revision manager), the approver, and CertificateRequests
// of CA and SelfSigned issuers, with their Issuers and ClusterIssuers. Each
// controller is cert-manager's own code, registered by its package.
//
// It exists because cert-manager's controller binary is a module of its own
// (cmd/controller, module path github.com/cert-manager/cert-manager/controller-binary)
// that the Go module proxy does not serve: its path does not match its
// directory, so `go build` cannot fetch it (proxy.golang.org answers 404). The
// wiring below is this repository's, not a copy of cmd/controller/app: it
// builds cert-manager's ContextFactory, constructs the named controllers,
// starts the shared informers and runs them until SIGTERM. No leader
// election, no webhook, no ACME, Vault or Venafi, no metrics server.
// Development tooling (dev/certmanager starts it), never shipped.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each package registers its controller with controller.Register.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The issuer types the Issuer and ClusterIssuer controllers set up.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

const defaultControllers = "issuers,clusterissuers,certificates-trigger,certificates-key-manager," +
	"certificates-request-manager,certificates-issuing,certificates-readiness,certificates-revision-manager," +
	"certificaterequests-approver,certificaterequests-issuer-ca,certificaterequests-issuer-selfsigned"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "d8-cert-manager", "namespace of the Secrets ClusterIssuers refer to (cert-manager's --cluster-resource-namespace)")
	names := flag.String("controllers", defaultControllers, "comma-separated controllers to run")
	flag.Parse()
	logf.InitLogs()
	if err := run(*kubeconfig, *clusterResourceNamespace, strings.Split(*names, ",")); err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager-controller: %v\n", err)
		os.Exit(1)
	}
}

func run(kubeconfig, clusterResourceNamespace string, names []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "cert-manager-controller")
	// cert-manager's default client limits (--kube-api-qps, --kube-api-burst).
	opts := controller.ContextOptions{Kubeconfig: kubeconfig, KubernetesAPIQPS: 20, KubernetesAPIBurst: 50}
	opts.ClusterResourceNamespace = clusterResourceNamespace
	// cert-manager's defaults for a failed request's back-off
	// (--certificate-request-minimum-backoff-duration and -maximum-).
	opts.CertificateRequestMinimumBackoffDuration = time.Hour
	opts.CertificateRequestMaximumBackoffDuration = 32 * time.Hour
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	var ifaces []controller.Interface
	for _, name := range names {
		construct, ok := controller.Known()[name]
		if !ok {
			return fmt.Errorf("unknown controller %q", name)
		}
		iface, err := construct(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		ifaces = append(ifaces, iface)
	}
	// The constructors registered their informers; start them all.
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	var wg sync.WaitGroup
	errs := make(chan error, len(ifaces))
	for i, iface := range ifaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := iface.Run(1, ctx); err != nil {
				errs <- fmt.Errorf("controller %s: %w", names[i], err)
			}
		}()
	}
	fmt.Fprintf(os.Stderr, "cert-manager-controller: running %s\n", strings.Join(names, ", "))
	wg.Wait()
	close(errs)
	return <-errs
}
