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

// Command agent is the StarRocks FE sidecar of the managed-starrocks module:
// a TLS-only MySQL-protocol client that keeps the StarRocks accounts, manages
// cluster membership and runtime configuration, watches the instance
// certificate and reports status on its Pod. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/agent"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/server"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
)

func main() {
	if err := run(); err != nil {
		slog.Error("agent stopped", "error", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		configFile           = flag.String("config", "/etc/starrocks-agent/config/agent.json", "agent configuration file (ConfigMap); reloaded on change")
		caFile               = flag.String("tls-ca-file", "/etc/starrocks/tls/ca.crt", "CA to verify the FE with; tls.crt in the same directory is the instance certificate and is watched")
		credentialsDir       = flag.String("credentials-dir", "/etc/starrocks-agent/credentials", "the module's accounts: files username and password (the agent's account) and root-password")
		sourceCredentialsDir = flag.String("source-credentials-dir", "", "root-password of the instance this one was restored from (optional)")
		adminCredsDir        = flag.String("admin-credentials-dir", "/etc/starrocks-agent/admin-credentials", "the team's admin account: files username and password (created once with this password)")
		podName              = flag.String("pod-name", os.Getenv("POD_NAME"), "own pod name, for the status annotation")
		podNamespace         = flag.String("pod-namespace", os.Getenv("POD_NAMESPACE"), "own pod namespace")
		selfHost             = flag.String("self-host", "", "FQDN of this pod's FE, as listed in SHOW FRONTENDS")
		listen               = flag.String("listen", ":8090", "HTTP address for /healthz, /readyz, /metrics")
		helperFile           = flag.String("helper-file", "/opt/starrocks/agent-run/fe-helper", "file the FE start wrapper waits for; receives leaderhost:editLogPort")
		metaDir              = flag.String("meta-dir", "", "the FE's meta directory (read only): empty meta on a bootstrapped instance makes the FE rejoin the leader; empty flag: never checked")
		logLevel             = flag.String("log-level", "Info", "Debug, Info, Warn or Error")
		kubeconfig           = flag.String("kubeconfig", "", "kubeconfig file; empty means in-cluster configuration")
		interval             = flag.Duration("interval", 15*time.Second, "time between passes when nothing changes")
		publishStatus        = flag.Bool("publish-status", true, "patch the pod annotation with the status (needs get,patch on pods)")
		manageUsers          = flag.Bool("manage-users", true, "apply agentConfig.grants users: read their password Secrets and update their connection Secrets (needs get,patch on those Secrets); false leaves every declared user pending")
	)
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(*logLevel))); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	// Both libraries would otherwise print plain text lines to stderr; one
	// JSON stream is what the log pipeline parses. Neither logs DSNs.
	klog.SetSlogLogger(log.With("source", "client-go"))
	_ = mysql.SetLogger(driverLogger{log.With("source", "mysql-driver")})
	if *selfHost == "" {
		return errors.New("--self-host is required")
	}

	metrics := status.NewMetrics()
	opts := agent.Options{
		ConfigFile:           *configFile,
		CAFile:               *caFile,
		CertFile:             filepath.Join(filepath.Dir(*caFile), "tls.crt"),
		CredentialsDir:       *credentialsDir,
		SourceCredentialsDir: *sourceCredentialsDir,
		AdminCredentialsDir:  *adminCredsDir,
		SelfHost:             *selfHost,
		HelperFile:           *helperFile,
		MetaDir:              *metaDir,
		Interval:             *interval,
		Metrics:              metrics,
		Logger:               log,
	}
	if *publishStatus || *manageUsers {
		if *podName == "" || *podNamespace == "" {
			return errors.New("--pod-name and --pod-namespace are required to publish the status and manage users (or --publish-status=false --manage-users=false)")
		}
		restCfg, err := kubeConfig(*kubeconfig)
		if err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(restCfg)
		if err != nil {
			return fmt.Errorf("kubernetes client: %w", err)
		}
		if *publishStatus {
			opts.Publisher = &status.PodAnnotation{Pods: cs.CoreV1(), Namespace: *podNamespace, Name: *podName}
		}
		if *manageUsers {
			opts.Secrets = &agent.KubeSecrets{Secrets: cs.CoreV1(), Namespace: *podNamespace}
		}
		// A shared-data instance's CN count: get on the CN StatefulSet by
		// name (read only when the configuration has sharedData).
		opts.StatefulSets = &agent.KubeStatefulSets{StatefulSets: cs.AppsV1(), Namespace: *podNamespace}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	a := agent.New(opts)
	httpDone := make(chan error, 1)
	go func() {
		httpDone <- server.Serve(ctx, *listen, server.Handler(metrics.Registry, server.Checks{Live: a.Live, Ready: a.Ready}))
	}()
	log.Info("agent starting", "selfHost", *selfHost, "listen", *listen)
	runErr := a.Run(ctx)
	stop()
	httpErr := <-httpDone
	if runErr != nil {
		return runErr
	}
	if httpErr != nil {
		return httpErr
	}
	log.Info("agent stopped gracefully")
	return nil
}

// driverLogger adapts slog to the go-sql-driver Logger interface.
type driverLogger struct{ log *slog.Logger }

func (d driverLogger) Print(v ...any) { d.log.Warn(fmt.Sprint(v...)) }

func kubeConfig(path string) (*rest.Config, error) {
	if path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("in-cluster kubernetes configuration: %w", err)
	}
	return cfg, nil
}
