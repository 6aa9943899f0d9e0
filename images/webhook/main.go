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

// Command webhook is the admission webhook of managed-starrocks: it rejects
// Starrocks objects that break their StarrocksClass, fills in class defaults,
// and checks and normalises StarrocksClass objects. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/deckhouse/managed-starrocks/images/webhook/internal/app"
	"github.com/deckhouse/managed-starrocks/pkg/desired"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
}

// config is what the command line says.
type config struct {
	app.Options
	Kubeconfig string
	LogLevel   slog.Level
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.StringVar(&c.Listen, "listen", ":9443", "address of the HTTPS admission server")
	fs.StringVar(&c.HealthListen, "health-listen", ":8080", "address of the plain HTTP /healthz, /readyz and /metrics server")
	fs.StringVar(&c.CertFile, "tls-cert-file", "/etc/webhook/certs/tls.crt", "PEM serving certificate (reloaded when it changes)")
	fs.StringVar(&c.KeyFile, "tls-key-file", "/etc/webhook/certs/tls.key", "PEM private key of the serving certificate")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig file; empty means the in-cluster service account")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", 20*time.Second, "how long in-flight reviews may finish after SIGTERM")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", 3*time.Second, "how long to keep serving, unready, after SIGTERM so endpoints drop the pod first")
	level := fs.String("log-level", envOr("LOG_LEVEL", "Info"), "Debug, Info, Warn or Error (env LOG_LEVEL)")
	maxInstances := fs.String("max-instances", envOr("MAX_INSTANCES", strconv.Itoa(desired.DefaultMaxInstances)), "refuse to create a Starrocks once the cluster has this many; 0: no limit (env MAX_INSTANCES, module setting instances.maxCount)")
	maxPerNamespace := fs.String("max-per-namespace", envOr("MAX_PER_NAMESPACE", "0"), "refuse to create a Starrocks once its namespace has this many; 0: no limit (env MAX_PER_NAMESPACE, module setting instances.maxPerNamespace)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	n, err := strconv.Atoi(*maxInstances)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("--max-instances %q: want a whole number, 0 or more", *maxInstances)
	}
	c.MaxInstances = n
	if n, err = strconv.Atoi(*maxPerNamespace); err != nil || n < 0 {
		return nil, fmt.Errorf("--max-per-namespace %q: want a whole number, 0 or more", *maxPerNamespace)
	}
	c.MaxPerNamespace = n
	if err := c.LogLevel.UnmarshalText([]byte(strings.ToUpper(*level))); err != nil {
		return nil, fmt.Errorf("--log-level %q: want Debug, Info, Warn or Error", *level)
	}
	return c, nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// run parses flags, starts the webhook and serves until SIGTERM/SIGINT or
// ctx is done.
func run(ctx context.Context, args []string, logOut *os.File) error {
	c, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: c.LogLevel}))

	var cfg *rest.Config
	if c.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("load Kubernetes client configuration: %w", err)
	}
	cfg.UserAgent = "managed-starrocks-webhook"

	a, err := app.New(c.Options, cfg, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return a.Run(ctx)
}
