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

// Package app wires the webhook together: the HTTPS admission server, the
// health and metrics server, the class informer and the certificate
// watcher, with a graceful shutdown.
package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/deckhouse/managed-starrocks/images/webhook/internal/admission"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/certwatch"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/classes"
	"github.com/deckhouse/managed-starrocks/images/webhook/internal/instances"
	"github.com/deckhouse/managed-starrocks/pkg/classrules"
)

// Options are the webhook's settings (flags in main).
type Options struct {
	Listen       string // admission HTTPS address, e.g. :9443
	HealthListen string // plain HTTP /healthz, /readyz, /metrics, e.g. :8080
	CertFile     string
	KeyFile      string
	// ShutdownGrace bounds how long in-flight reviews may finish after
	// SIGTERM.
	ShutdownGrace time.Duration
	// ShutdownDelay keeps serving after SIGTERM, unready, so the Service
	// endpoints drop the pod before the listener closes.
	ShutdownDelay time.Duration
	// MaxInstances is the module setting instances.maxCount: the most
	// Starrocks the cluster may have before a CREATE is refused; 0: no limit.
	MaxInstances int
	// MaxPerNamespace is the module setting instances.maxPerNamespace: the
	// most Starrocks a namespace may have before a CREATE there is refused;
	// 0: no limit.
	MaxPerNamespace int
}

// App is a bound, not yet running webhook.
type App struct {
	opts    Options
	log     *slog.Logger
	certs   *certwatch.Watcher
	classes *classes.Source
	// instances: what a CREATE is counted with (and a class DELETE).
	instances *instances.Source
	webhook   *http.Server
	health    *http.Server
	webLn     net.Listener
	healthLn  net.Listener
	stopping  atomic.Bool
}

// New loads the certificate, binds both listeners and prepares the class
// informer; Run starts everything.
func New(opts Options, cfg *rest.Config, log *slog.Logger) (*App, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	certMetrics := newCertMetrics(reg)

	certs, err := certwatch.New(opts.CertFile, opts.KeyFile, log, certwatch.Options{OnReload: certMetrics.observe})
	if err != nil {
		return nil, fmt.Errorf("load serving certificate: %w", err)
	}

	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create Kubernetes client: %w", err)
	}
	src := classes.New(client)
	insts := instances.New(client)
	cache := classrules.NewCache()
	h := &admission.Handler{Classes: src, Instances: insts, Objects: src, Compile: cache.Get, Log: log, Metrics: admission.NewMetrics(reg), MaxInstances: opts.MaxInstances, MaxPerNamespace: opts.MaxPerNamespace}

	a := &App{opts: opts, log: log, certs: certs, classes: src, instances: insts}
	mux := http.NewServeMux()
	h.Register(mux)
	a.webhook = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		// The apiserver gives a webhook at most 30s; nothing here is slower.
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 30 * time.Second,
		IdleTimeout:  90 * time.Second,
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		TLSConfig: &tls.Config{
			GetCertificate: certs.GetCertificate,
			MinVersion:     tls.VersionTLS12,
		},
	}
	a.health = &http.Server{
		Handler:           a.healthMux(reg),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	if a.webLn, err = net.Listen("tcp", opts.Listen); err != nil {
		return nil, fmt.Errorf("listen %s: %w", opts.Listen, err)
	}
	if a.healthLn, err = net.Listen("tcp", opts.HealthListen); err != nil {
		_ = a.webLn.Close()
		return nil, fmt.Errorf("listen %s: %w", opts.HealthListen, err)
	}
	return a, nil
}

// WebhookAddr and HealthAddr are the bound addresses (tests listen on :0).
func (a *App) WebhookAddr() string { return a.webLn.Addr().String() }
func (a *App) HealthAddr() string  { return a.healthLn.Addr().String() }

func (a *App) healthMux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	// Ready once the class cache is filled: before that every instance would
	// look like it names a missing class (the live GET fallback would carry
	// the whole load).
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case a.stopping.Load():
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
		case !a.classes.HasSynced():
			http.Error(w, "StarrocksClass cache not synced yet", http.StatusServiceUnavailable)
		case !a.instances.HasSynced():
			http.Error(w, "Starrocks and Namespace caches not synced yet", http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok\n"))
		}
	})
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// Run serves until ctx is done, then shuts down gracefully: unready first,
// in-flight reviews finished, listeners closed.
func (a *App) Run(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.classes.Start(runCtx)
	a.instances.Start(runCtx)

	errs := make(chan error, 3)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := a.certs.Run(runCtx); err != nil {
			errs <- fmt.Errorf("watch serving certificate: %w", err)
		}
	})
	wg.Go(func() {
		if err := a.webhook.ServeTLS(a.webLn, "", ""); !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("serve admission on %s: %w", a.opts.Listen, err)
		}
	})
	wg.Go(func() {
		if err := a.health.Serve(a.healthLn); !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("serve health on %s: %w", a.opts.HealthListen, err)
		}
	})
	a.log.Info("webhook serving", "listen", a.WebhookAddr(), "healthListen", a.HealthAddr())

	var runErr error
	select {
	case <-ctx.Done():
		a.log.Info("shutting down")
	case runErr = <-errs:
		a.log.Error("webhook failed, shutting down", "error", runErr)
	}
	a.stopping.Store(true)
	if runErr == nil && a.opts.ShutdownDelay > 0 {
		time.Sleep(a.opts.ShutdownDelay)
	}
	shutCtx, shutCancel := context.WithTimeout(context.Background(), a.opts.ShutdownGrace)
	defer shutCancel()
	if err := a.webhook.Shutdown(shutCtx); err != nil {
		a.log.Warn("admission server did not drain in time", "error", err)
	}
	if err := a.health.Shutdown(shutCtx); err != nil {
		a.log.Warn("health server did not drain in time", "error", err)
	}
	cancel()
	wg.Wait()
	return runErr
}

type certMetrics struct {
	notAfter prometheus.Gauge
	reloads  *prometheus.CounterVec
}

func newCertMetrics(reg prometheus.Registerer) *certMetrics {
	m := &certMetrics{
		notAfter: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "managed_starrocks_webhook",
			Name:      "serving_certificate_not_after_seconds",
			Help:      "Expiry (Unix time) of the serving certificate in use.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "managed_starrocks_webhook",
			Name:      "serving_certificate_reloads_total",
			Help:      "Serving certificate loads, by result (success, error).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.notAfter, m.reloads)
	return m
}

func (m *certMetrics) observe(leaf *x509.Certificate, err error) {
	if err != nil {
		m.reloads.WithLabelValues("error").Inc()
		return
	}
	m.reloads.WithLabelValues("success").Inc()
	m.notAfter.Set(float64(leaf.NotAfter.Unix()))
}
