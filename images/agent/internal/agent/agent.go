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

// Package agent is the sidecar's control loop: on every change of the mounted
// certificate, configuration or credentials, and periodically, it connects to
// the FE over verified TLS, first makes sure of the accounts (root's
// password, its own account, the team's admin), then keeps the cluster
// membership and the runtime configuration as desired, and publishes its
// status.
package agent

import (
	"context"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/accounts"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/certwatch"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/conn"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/membership"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/runtimeconfig"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/status"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// Options configure an Agent.
type Options struct {
	ConfigFile string
	CAFile     string
	CertFile   string
	// CredentialsDir holds the module's accounts: username and password of
	// the agent's account, root-password.
	CredentialsDir string
	// AdminCredentialsDir holds the team's admin account: username, password.
	AdminCredentialsDir string
	// SourceCredentialsDir holds root-password of the instance this one
	// was restored from (its agent's Secret, mounted optional); empty, or
	// without the file, when there is none.
	SourceCredentialsDir string
	// SelfHost is the FQDN of this pod's FE.
	SelfHost   string
	HelperFile string
	// MetaDir is the FE's meta directory, mounted read only; empty never
	// checks it (bootstrap.go).
	MetaDir string
	// Interval between passes without a trigger; default 15s.
	Interval time.Duration
	// AccountsRetry is the interval while the accounts are not ready yet;
	// default 2s, so root's empty password does not last.
	AccountsRetry time.Duration
	// PassTimeout bounds one pass; default 60s.
	PassTimeout time.Duration
	// RepublishEvery re-publishes an unchanged status; default 5m.
	RepublishEvery time.Duration
	// ReadReplicationEveryPass reads the tables' replication numbers on
	// every pass instead of at most once a minute (tests).
	ReadReplicationEveryPass bool
	// DialFunc replaces the TCP dialer (tests).
	DialFunc    func(ctx context.Context, network, addr string) (net.Conn, error)
	OnHandshake func(peer *x509.Certificate)
	Metrics     *status.Metrics
	// Publisher may be nil: the status is then only logged and served.
	Publisher status.Publisher
	// Secrets reads the users' password Secrets and updates their
	// connection Secrets (users.go); nil applies no user.
	Secrets SecretStore
	// StatefulSets reads the CN StatefulSet's replicas of a shared-data
	// instance (shareddata.go); nil follows ComputeNodes.Min.
	StatefulSets StatefulSetReader
	// ComputeCacheReadEvery spaces the leader's reads of the CNs' cache
	// statistics (shareddata.go); default a minute: for each the CN
	// gathers the StarCache instance's detailed metrics
	// (datacache_action.cpp: starcache_metrics(2)), which StarRocks keeps
	// off its own /metrics for their cost (StarRocks/starrocks#58204 reads
	// only level 1), and a minute still gives Grafana's rate() its points.
	ComputeCacheReadEvery time.Duration
	// PasswordCheckEvery: see DefaultPasswordCheckEvery.
	PasswordCheckEvery time.Duration
	Logger             *slog.Logger
}

// Agent is one sidecar.
type Agent struct {
	opts    Options
	copts   conn.Options
	log     *slog.Logger
	service *conn.Client // through the client Service: cluster-wide statements
	self    *conn.Client // to this pod's FE: per-FE configuration
	http    *http.Client // to the CNs' HTTP API (shareddata.go)

	trigger chan struct{}
	// firstLoad is closed after the first certificate load, so the first
	// pass does not run (and fail) before the watcher has read the files.
	firstLoad     chan struct{}
	firstLoadOnce sync.Once

	mu            sync.Mutex
	material      *certwatch.Material
	materialErr   error
	accounts      *agentconfig.AccountsStatus
	join          *agentconfig.JoinStatus
	imageCreated  string    // image.go
	imageBaseline int64     // image.go
	imageAskedAt  time.Time // image.go
	unhealthyAt   time.Time // tablets.go
	secrets       []string  // for scrubbing messages; never logged
	tlsOK         bool
	tlsErr        string
	lastLoop      time.Time          // when the latest pass of Run started (Live)
	st            agentconfig.Status // written by publish only, which stamps UpdatedAt
	published     string
	publishedAt   time.Time
	helperContent string
	replication   replicationCache
	users         *agentconfig.UsersStatus // users.go
	userPasswords []string                 // for scrubbing, like secrets
	usersRun      usersRun
	backups       backup.Runner                 // backups.go
	backupSt      *agentconfig.BackupStatus     // backups.go
	restoreSt     *agentconfig.RestoreStatus    // backups.go
	sharedRun     sharedDataRun                 // shareddata.go
	sharedSt      *agentconfig.SharedDataStatus // shareddata.go
	volumeKeys    []string                      // shareddata.go, for scrubbing like secrets
}

// New builds an Agent; Run starts it.
func New(opts Options) *Agent {
	if opts.Interval == 0 {
		opts.Interval = 15 * time.Second
	}
	if opts.AccountsRetry == 0 {
		opts.AccountsRetry = 2 * time.Second
	}
	if opts.PassTimeout == 0 {
		opts.PassTimeout = 60 * time.Second
	}
	if opts.RepublishEvery == 0 {
		opts.RepublishEvery = 5 * time.Minute
	}
	if opts.ComputeCacheReadEvery == 0 {
		opts.ComputeCacheReadEvery = time.Minute
	}
	if opts.PasswordCheckEvery == 0 {
		opts.PasswordCheckEvery = DefaultPasswordCheckEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = status.NewMetrics()
	}
	copts := conn.Options{DialFunc: opts.DialFunc, OnHandshake: opts.OnHandshake}
	transport := &http.Transport{MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute}
	if opts.DialFunc != nil {
		transport.DialContext = opts.DialFunc
	}
	return &Agent{
		opts:      opts,
		copts:     copts,
		log:       opts.Logger,
		service:   conn.New(copts),
		self:      conn.New(copts),
		http:      &http.Client{Transport: transport, Timeout: 5 * time.Second},
		trigger:   make(chan struct{}, 1),
		firstLoad: make(chan struct{}),
	}
}

// Run works until ctx ends, then closes its connections.
func (a *Agent) Run(ctx context.Context) error {
	defer a.service.Close()
	defer a.self.Close()
	defer a.closeUsers()

	w := &certwatch.Watcher{CAFile: a.opts.CAFile, CertFile: a.opts.CertFile, OnChange: a.onCertificate}
	errCh := make(chan error, 2)
	go func() { errCh <- w.Run(ctx) }()
	go func() {
		dirs := []string{filepath.Dir(a.opts.ConfigFile), a.opts.CredentialsDir}
		if a.opts.AdminCredentialsDir != "" {
			dirs = append(dirs, a.opts.AdminCredentialsDir)
		}
		errCh <- a.watchFiles(ctx, dirs...)
	}()

	select {
	case <-a.firstLoad:
	case err := <-errCh:
		return err
	case <-ctx.Done():
		return nil
	}
	ticker := time.NewTicker(a.opts.Interval)
	defer ticker.Stop()
	for {
		a.mu.Lock()
		a.lastLoop = time.Now()
		a.mu.Unlock()
		passCtx, cancel := context.WithTimeout(ctx, a.opts.PassTimeout)
		a.Pass(passCtx)
		cancel()
		// Until the accounts are ready root may still have its empty
		// password: try again soon rather than after the interval.
		var retry <-chan time.Time
		if st := a.Status().Accounts; st == nil || !st.Ready {
			retry = time.After(a.opts.AccountsRetry)
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-errCh:
			if err != nil {
				return err
			}
		case <-ticker.C:
		case <-retry:
		case <-a.trigger:
		}
	}
}

func (a *Agent) kick() {
	select {
	case a.trigger <- struct{}{}:
	default:
	}
}

// onCertificate switches both pools to the new CA right away, without
// waiting for the next pass, and proves the new setup with a handshake.
func (a *Agent) onCertificate(m *certwatch.Material, err error) {
	a.mu.Lock()
	a.material, a.materialErr = m, err
	a.mu.Unlock()
	defer a.firstLoadOnce.Do(func() { close(a.firstLoad) })
	if err != nil {
		a.log.Error("load certificates", "error", err)
		a.opts.Metrics.SetCertificate(time.Time{}, false)
	} else {
		a.log.Info("certificates loaded", "serial", m.Leaf.SerialNumber.Text(16), "notAfter", m.Leaf.NotAfter)
		if cfg, secrets, err := a.inputs(); err == nil {
			_ = a.setTargets(cfg, secrets)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			a.recordTLS(a.service.Ping(ctx))
			cancel()
		}
	}
	a.kick()
}

// LoadCertificates reads the certificate files once, as Run's watcher does,
// for callers that drive Pass themselves.
func (a *Agent) LoadCertificates() {
	a.onCertificate(certwatch.Load(a.opts.CAFile, a.opts.CertFile))
}

// watchFiles triggers a pass when a ConfigMap or Secret volume is updated.
func (a *Agent) watchFiles(ctx context.Context, dirs ...string) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("create file watcher: %w", err)
	}
	defer fw.Close()
	for _, d := range dirs {
		if err := fw.Add(d); err != nil {
			return fmt.Errorf("watch %s: %w", d, err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-fw.Events:
			if !ok {
				return nil
			}
			a.kick()
		case _, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			a.kick()
		}
	}
}

// readFiles reads the named files of dir; a trailing newline is ignored.
func readFiles(dir string, names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, &accounts.InvalidError{Err: fmt.Errorf("read %s: %w", name, err)}
		}
		out[i] = strings.TrimRight(string(data), "\r\n")
	}
	return out, nil
}

func (a *Agent) inputs() (*agentconfig.Config, accounts.Secrets, error) {
	cfg, err := agentconfig.Load(a.opts.ConfigFile)
	if err != nil {
		return nil, accounts.Secrets{}, err
	}
	mod, err := readFiles(a.opts.CredentialsDir, agentconfig.UsernameKey, agentconfig.PasswordKey, agentconfig.RootPasswordKey)
	if err != nil {
		return nil, accounts.Secrets{}, err
	}
	team, err := readFiles(a.opts.AdminCredentialsDir, agentconfig.UsernameKey, agentconfig.PasswordKey)
	if err != nil {
		return nil, accounts.Secrets{}, err
	}
	s := accounts.Secrets{AgentUser: mod[0], AgentPassword: mod[1], RootPassword: mod[2], AdminUser: team[0], AdminPassword: team[1]}
	if a.opts.SourceCredentialsDir != "" {
		// Optional: the source's Secret may be gone, and then root of a
		// restored FE stays the source's (RootPasswordRefused).
		if src, err := readFiles(a.opts.SourceCredentialsDir, agentconfig.RootPasswordKey); err == nil {
			s.SourceRootPassword = src[0]
		}
	}
	a.mu.Lock()
	a.secrets = []string{s.AgentPassword, s.RootPassword, s.AdminPassword}
	if s.SourceRootPassword != "" {
		a.secrets = append(a.secrets, s.SourceRootPassword)
	}
	a.mu.Unlock()
	if err := s.Validate(); err != nil {
		return nil, accounts.Secrets{}, &accounts.InvalidError{Err: err}
	}
	return cfg, s, nil
}

// readSourceRootPassword reads root's password of the instance this one
// was restored from out of the team's Secret that spec.storage.restoreFrom.
// rootPasswordSecretRef names (cfg.SharedData.SourceRootPassword): it
// replaces the mounted one of a source of this namespace. By name on every
// pass, so a Secret named after the instance was created counts without a
// new pod; only until the instance has bootstrapped (root has the module's
// password from then on), so the team may delete it then. A Secret or key
// that is missing leaves s as it is: root then refuses, and
// RootPasswordRefused says so; it reports that (unread), and then the
// agent waits for the Secret the team named rather than reset root's
// password (rootreset.go).
func (a *Agent) readSourceRootPassword(ctx context.Context, cfg *agentconfig.Config, s *accounts.Secrets) (unread bool) {
	if cfg.Bootstrapped || cfg.SharedData == nil || cfg.SharedData.SourceRootPassword == nil || a.opts.Secrets == nil {
		return false
	}
	ref := cfg.SharedData.SourceRootPassword
	data, err := a.opts.Secrets.Get(ctx, ref.Name)
	if err != nil {
		a.log.Warn("cannot read root's password of the restore source", "secret", ref.Name, "error", err)
		return true
	}
	v := strings.TrimRight(string(data[ref.Key]), "\r\n")
	if v == "" {
		a.log.Warn("the Secret with root's password of the restore source has no such key", "secret", ref.Name, "key", ref.Key)
		return true
	}
	if err := accounts.ValidatePassword(v); err != nil {
		a.log.Warn("the restore source's root password in the Secret is refused", "secret", ref.Name, "key", ref.Key, "error", err)
		return true
	}
	s.SourceRootPassword = v
	a.mu.Lock()
	a.secrets = append(a.secrets, v)
	a.mu.Unlock()
	return false
}

// scrub replaces any secret in a message: errors are built never to hold
// one, this makes sure.
func (a *Agent) scrub(msg string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range append(append(append([]string(nil), a.secrets...), a.userPasswords...), a.volumeKeys...) {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}

func (a *Agent) setTargets(cfg *agentconfig.Config, s accounts.Secrets) error {
	a.mu.Lock()
	m := a.material
	a.mu.Unlock()
	if m == nil {
		return errors.New("no certificates loaded")
	}
	port := strconv.Itoa(cfg.QueryPort)
	base := conn.Target{ServerName: cfg.QueryHost, Roots: m.Roots, RootsID: m.ID, User: s.AgentUser, Password: s.AgentPassword}
	svc := base
	svc.Addr = net.JoinHostPort(cfg.QueryHost, port)
	if err := a.service.SetTarget(svc); err != nil {
		return fmt.Errorf("target %s: %w", svc.Addr, err)
	}
	// The own FE is dialled by its pod name but verified as the Service
	// name, which is the name the instance certificate is issued for.
	self := base
	self.Addr = net.JoinHostPort(a.opts.SelfHost, port)
	if err := a.self.SetTarget(self); err != nil {
		return fmt.Errorf("target %s: %w", self.Addr, err)
	}
	return nil
}

func (a *Agent) recordTLS(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch kind := conn.KindOf(err); {
	case err == nil, kind == conn.KindAuth, kind == conn.KindQuery:
		// The handshake worked; what failed, if anything, came after it.
		a.tlsOK, a.tlsErr = true, ""
	case kind == conn.KindTLS:
		a.tlsOK, a.tlsErr = false, err.Error()
	}
	// Connection errors and local errors say nothing new about TLS.
}

// Pass runs one reconciliation and publishes the status.
func (a *Agent) Pass(ctx context.Context) {
	now := time.Now()
	applied, pending, membershipSt, err := a.pass(ctx)
	msg := ""
	if err != nil {
		msg = a.scrub(err.Error())
	}
	if k := conn.KindOf(err); k != "" {
		a.opts.Metrics.Error(string(k))
	}
	a.recordTLS(err)
	ok := err == nil
	a.opts.Metrics.Apply(ok, now)
	last := agentconfig.ApplyStatus{Time: now.UTC().Format(time.RFC3339), Succeeded: ok, Applied: applied, Pending: pending}
	if len(pending) > 0 {
		last.PendingMessage = runtimeconfig.PendingMessage
	}
	if err != nil {
		last.Error = msg
		a.log.Warn("pass failed", "kind", string(conn.KindOf(err)), "error", msg)
	} else if len(applied) > 0 {
		a.log.Info("configuration applied", "applied", applied)
	}
	a.publish(ctx, last, membershipSt)
}

// pass returns the keys applied, those pending (BE configuration without
// a live BE), the membership the leader's agent reports, and the error.
func (a *Agent) pass(ctx context.Context) (applied, pending []string, mst *agentconfig.MembershipStatus, err error) {
	// Accounts come first, before anything else of the pass: until they
	// are ready the agent has no account of its own to work with.
	cfg, secrets, err := a.inputs()
	sourceUnread := false
	if err == nil {
		sourceUnread = a.readSourceRootPassword(ctx, cfg, &secrets)
	}
	a.mu.Lock()
	materialErr := a.materialErr
	a.mu.Unlock()
	if err == nil && materialErr != nil {
		err = fmt.Errorf("certificates: %w", materialErr)
	}
	if err == nil {
		err = a.setTargets(cfg, secrets)
	}
	joining := false
	if err == nil {
		// Before the accounts: a first FE of a new instance waits for
		// this to start at all.
		joining, err = a.guardBootstrap(cfg)
	}
	if err == nil {
		var resetting bool
		if resetting, err = a.resetRoot(ctx, cfg, secrets); !resetting {
			err = a.askRootReset(cfg, sourceUnread, a.ensureAccounts(ctx, cfg, secrets))
		}
	}
	if st, known := accounts.Status(err); known {
		st.Message = a.scrub(st.Message)
		a.mu.Lock()
		a.accounts = &st
		a.mu.Unlock()
		a.opts.Metrics.SetAccountsReady(st.Ready)
	}
	if err != nil {
		if joining {
			a.setJoin(agentconfig.JoinReasonWaitingForLeader, "no FE leader answers through the client Service ("+string(conn.KindOf(err))+" error): the FE waits for one instead of starting an empty cluster")
		}
		return nil, nil, nil, err
	}

	var fes []membership.Frontend
	var bes []membership.Backend
	err = conn.Retry(ctx, 3, 300*time.Millisecond, func(ctx context.Context) error {
		return a.service.Do(ctx, "read membership", func(ctx context.Context, db *sql.DB) error {
			var err error
			if fes, err = membership.ShowFrontends(ctx, db); err != nil {
				return err
			}
			bes, err = membership.ShowBackends(ctx, db)
			return err
		})
	})
	if err != nil {
		return nil, nil, nil, err
	}
	leader, hasLeader := membership.Leader(fes)
	if joining {
		return nil, nil, nil, a.rejoin(ctx, cfg, fes, leader, hasLeader)
	}
	var selfFE *membership.Frontend
	for i := range fes {
		if membership.SameHost(fes[i].Host, a.opts.SelfHost) {
			selfFE = &fes[i]
		}
	}
	if selfFE != nil && hasLeader {
		if err := a.writeHelper(fmt.Sprintf("%s:%d", leader.Host, leader.EditLogPort)); err != nil {
			return nil, nil, nil, err
		}
	}

	var errs []error
	if hasLeader && membership.SameHost(leader.Host, a.opts.SelfHost) {
		plan := membership.Decide(membership.Desired{Frontends: cfg.Frontends, EditLogPort: cfg.EditLogPort,
			Backends: cfg.Backends, HeartbeatPort: cfg.HeartbeatPort}, fes, bes)
		mst = membershipStatus(leader, fes, bes, plan)
		if !plan.Empty() {
			err := a.service.Do(ctx, "change membership", func(ctx context.Context, db *sql.DB) error {
				done, err := membership.Apply(ctx, db, plan)
				for _, s := range done {
					a.log.Info("membership changed", "statement", s)
				}
				return err
			})
			if err != nil {
				errs = append(errs, err)
				a.noteRefusedDecommission(mst, err)
			}
		}
		if err := a.readReplication(ctx, mst, bes); err != nil {
			errs = append(errs, err)
		}
		for _, d := range plan.Draining {
			a.log.Info("backend draining", "host", d.Host, "tablets", d.TabletNum)
		}
		if err := a.createImage(ctx, cfg.CreateImage); err != nil {
			errs = append(errs, err)
		}
		mst.ImageCreated, mst.ImageBaseline, mst.ImageRequestedAt = a.imageRequest()
		mst.Tablets = a.readTablets(ctx, cfg.TabletHealth)
		volumeReady := true
		if cfg.SharedData != nil {
			var err error
			if volumeReady, err = a.runSharedData(ctx, cfg, mst); err != nil {
				errs = append(errs, err)
			}
		} else {
			a.setSharedDataStatus(nil)
			a.clearComputeCache()
		}
		if err := a.runBackups(ctx, cfg, leader.Version); err != nil {
			errs = append(errs, err)
		}
		if !volumeReady {
			// A shared-data FE creates a database on the default storage
			// volume; the declared ones wait for it.
			a.setUsersStatus(&agentconfig.UsersStatus{Applied: agentconfig.GrantsToken(cfg.Grants), Reason: ReasonStorageVolumePending,
				Message: "the declared databases, roles and users are applied once the instance's storage volume is ready"}, nil)
		} else if why := a.restorePending(cfg); why != "" {
			// Restore first: the declared databases, roles and
			// users are applied once the restore Completed, onto the
			// restored data, never into a database being restored.
			a.setUsersStatus(&agentconfig.UsersStatus{Applied: agentconfig.GrantsToken(cfg.Grants), Reason: ReasonRestorePending, Message: why}, nil)
		} else if err := a.applyUsers(ctx, cfg, secrets); err != nil {
			errs = append(errs, err)
		}
		if len(cfg.BackendConfig) > 0 && !anyAlive(bes) {
			// information_schema.be_configs needs a live BE: StarRocks
			// would only refuse the query. Everything else goes on.
			pending = runtimeconfig.BackendPending(cfg.BackendConfig).Pending
		} else if len(cfg.BackendConfig) > 0 {
			err := a.service.Do(ctx, "apply backend configuration", func(ctx context.Context, db *sql.DB) error {
				res, err := runtimeconfig.ApplyBackend(ctx, db, cfg.BackendConfig)
				applied = append(applied, res.Applied...)
				pending = append(pending, res.Pending...)
				return err
			})
			if err != nil {
				errs = append(errs, err)
			}
		}
	} else {
		a.clearComputeCache()
		// Only the leader's agent reports users and backups.
		a.setUsersStatus(nil, nil)
		a.setBackupStatus(nil, nil)
		a.setSharedDataStatus(nil)
	}
	// ADMIN SET FRONTEND CONFIG is forwarded to every FE (fe-core
	// common/ConfigBase.setConfig), but not to one that is down then;
	// every agent applies it to its own FE once that FE has joined, so no
	// FE depends on the forward.
	if len(cfg.FrontendConfig) > 0 && selfFE != nil && selfFE.Alive {
		err := a.self.Do(ctx, "apply frontend configuration", func(ctx context.Context, db *sql.DB) error {
			res, err := runtimeconfig.ApplyFrontend(ctx, db, cfg.FrontendConfig)
			applied = append(applied, res.Applied...)
			return err
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return applied, pending, mst, errors.Join(errs...)
}

// ensureAccounts works on the own FE first: it is reachable through the
// headless Service before the pod is Ready, so root's empty password is
// replaced right after the FE starts. A follower whose FE has not started
// yet (it waits for the helper file, written after this) goes through the
// client Service instead, where the accounts already exist.
func (a *Agent) ensureAccounts(ctx context.Context, cfg *agentconfig.Config, s accounts.Secrets) error {
	var err error
	for _, c := range []*conn.Client{a.self, a.service} {
		addr := c.Addr()
		login := a.loginAt(cfg, addr)
		var ch accounts.Changes
		err = nil
		if !cfg.Bootstrapped {
			err = refuseAnyPassword(ctx, addr, login)
		}
		if err == nil {
			err = conn.Retry(ctx, 2, 300*time.Millisecond, func(ctx context.Context) error {
				var err error
				ch, err = accounts.Ensure(ctx, c, login, s)
				return err
			})
		}
		if ch.AdminPasswordSet {
			a.log.Info("the admin account restored from the cluster snapshot got the password of the instance's credentials Secret", "fe", addr, "adminUser", s.AdminUser)
		}
		if ch.RootPasswordSet {
			a.log.Info("root password set from the agent's Secret", "fe", addr)
		}
		if ch.AgentRepaired {
			a.log.Info("accounts ensured through root", "fe", addr, "agentUser", s.AgentUser, "adminUser", s.AdminUser)
			if err == nil {
				err = a.renewSessions(ctx, c)
			}
		}
		if conn.KindOf(err) != conn.KindConnection {
			return err
		}
	}
	return err
}

// refuseAnyPassword fails when the FE at addr lets root in with any
// password: enable_auth_check is off while the first FE of a restored
// instance has root's password reset (rootreset.go), and every account
// check passes then, through the client Service too. Until the instance has
// bootstrapped the first ready report opens the client ports for good, so
// no agent touches the accounts through such an FE, let alone reports them
// ready.
func refuseAnyPassword(ctx context.Context, addr string, login accounts.Login) error {
	off, err := accounts.AcceptsAnyPassword(ctx, login)
	if err != nil || !off {
		return err
	}
	return &conn.Error{Kind: conn.KindAuth, Op: "check that the FE at " + addr + " checks passwords",
		Err: errors.New("it lets any password in (enable_auth_check = false: root's password of the restored first FE is being reset)")}
}

// loginAt opens clients of any account to the FE at addr.
func (a *Agent) loginAt(cfg *agentconfig.Config, addr string) accounts.Login {
	return func(user, password string) (*conn.Client, error) {
		a.mu.Lock()
		m := a.material
		a.mu.Unlock()
		lc := conn.New(a.copts)
		err := lc.SetTarget(conn.Target{Addr: addr, ServerName: cfg.QueryHost, Roots: m.Roots, RootsID: m.ID, User: user, Password: password})
		return lc, err
	}
}

// renewSessions closes the sessions the agent's other pool opened before a
// repair and checks that a new one has the roles. StarRocks fixes a
// session's active roles at login (fe-core qe/ConnectContext
// .setCurrentRoleIds from authentication/AuthenticationHandler) and a
// privilege check uses only those the user still holds (authorization/
// AuthorizationMgr.loadPrivilegeCollection): a session opened while the
// roles were revoked or not default keeps none after the repair, and every
// later statement on it would fail with 5203 while the accounts read as
// ready. repaired is the pool Ensure recycled and checked already.
func (a *Agent) renewSessions(ctx context.Context, repaired *conn.Client) error {
	for _, c := range []*conn.Client{a.self, a.service} {
		if c == repaired {
			continue
		}
		c.Recycle()
		err := accounts.Check(ctx, c)
		// The other FE address may not listen (the own FE not started, the
		// client Service without endpoints yet): its first session, later,
		// is new anyway.
		// Not an auth or query error of its own: a follower that has not
		// replayed the repair yet answers like a broken account, and that
		// says nothing about root's password. The next pass checks again.
		if err != nil && conn.KindOf(err) != conn.KindConnection {
			return &conn.Error{Kind: conn.KindQuery, Op: "check the agent account after the repair through " + c.Addr(), Err: err}
		}
	}
	return nil
}

func membershipStatus(leader membership.Frontend, fes []membership.Frontend, bes []membership.Backend, plan membership.Plan) *agentconfig.MembershipStatus {
	st := &agentconfig.MembershipStatus{Leader: leader.Host}
	for _, f := range fes {
		st.Frontends = append(st.Frontends, f.Host)
	}
	for _, b := range bes {
		st.Backends = append(st.Backends, b.Host)
	}
	for _, d := range plan.Draining {
		st.Draining = append(st.Draining, agentconfig.BackendDrain{Host: d.Host, TabletNum: d.TabletNum})
	}
	for _, f := range fes {
		st.Nodes = append(st.Nodes, agentconfig.NodeStatus{Host: f.Host, Alive: f.Alive, Version: f.Version})
	}
	for _, b := range bes {
		st.Nodes = append(st.Nodes, agentconfig.NodeStatus{Host: b.Host, Alive: b.Alive, Version: b.Version})
	}
	return st
}

// writeHelper publishes the leader's edit log address for the FE start
// wrapper of a joining pod. The rename makes the file appear complete.
func (a *Agent) writeHelper(content string) error {
	a.mu.Lock()
	same := a.helperContent == content
	a.mu.Unlock()
	if same || a.opts.HelperFile == "" {
		return nil
	}
	if data, err := os.ReadFile(a.opts.HelperFile); err == nil && string(data) == content {
		a.mu.Lock()
		a.helperContent = content
		a.mu.Unlock()
		return nil
	}
	tmp := a.opts.HelperFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return fmt.Errorf("write helper file: %w", err)
	}
	if err := os.Rename(tmp, a.opts.HelperFile); err != nil {
		return fmt.Errorf("write helper file: %w", err)
	}
	a.log.Info("helper file written", "path", a.opts.HelperFile, "helper", content)
	a.mu.Lock()
	a.helperContent = content
	a.mu.Unlock()
	return nil
}

func (a *Agent) publish(ctx context.Context, last agentconfig.ApplyStatus, mst *agentconfig.MembershipStatus) {
	a.mu.Lock()
	st := agentconfig.Status{LastApply: last, Membership: mst, Accounts: a.accounts, Join: a.join, Users: a.users,
		ImageJournalID: newestImage(a.opts.MetaDir), Backup: a.backupSt, Restore: a.restoreSt, SharedData: a.sharedSt}
	m, mErr := a.material, a.materialErr
	switch {
	case mErr != nil:
		reason := certwatch.ReasonCertificateInvalid
		var le *certwatch.LoadError
		if errors.As(mErr, &le) {
			reason = le.Reason
		}
		st.TLS = agentconfig.TLSStatus{Reason: reason, Message: mErr.Error()}
	case m == nil:
		st.TLS = agentconfig.TLSStatus{Reason: certwatch.ReasonCertificateMissing, Message: "certificates not loaded yet"}
	default:
		st.TLS = agentconfig.TLSStatus{Ready: a.tlsOK, NotAfter: m.Leaf.NotAfter.UTC().Format(time.RFC3339),
			Serial: m.Leaf.SerialNumber.Text(16)}
		if !a.tlsOK {
			st.TLS.Reason = "TLSMisconfigured"
			st.TLS.Message = a.tlsErr
			if st.TLS.Message == "" {
				st.TLS.Reason, st.TLS.Message = "NotConnected", "no TLS connection to the FE has succeeded yet"
			}
		}
	}
	// The time of the pass changes every run; compare without it so an
	// unchanged status does not patch the pod every interval.
	// JSON, not %+v: the membership and the join status hold pointers,
	// whose addresses differ every pass.
	mj, _ := json.Marshal(mst)
	jj, _ := json.Marshal(st.Join)
	uj, _ := json.Marshal(st.Users)
	bj, _ := json.Marshal(st.Backup)
	rj, _ := json.Marshal(st.Restore)
	sj, _ := json.Marshal(st.SharedData)
	key := fmt.Sprintf("%+v|%v|%v|%v|%s|%+v|%s|%s|%d|%s|%s|%s", st.TLS, last.Succeeded, last.Error, last.Pending, mj, st.Accounts, jj, uj, st.ImageJournalID, bj, rj, sj)
	due := key != a.published || time.Since(a.publishedAt) > a.opts.RepublishEvery || len(last.Applied) > 0
	st.UpdatedAt = time.Now().UTC().Format(time.RFC3339)
	a.st = st
	a.mu.Unlock()

	notAfter := time.Time{}
	if m != nil && mErr == nil {
		notAfter = m.Leaf.NotAfter
	}
	a.opts.Metrics.SetCertificate(notAfter, st.TLS.Ready)
	if !due || a.opts.Publisher == nil {
		return
	}
	if err := a.opts.Publisher.Publish(ctx, st); err != nil {
		a.log.Warn("publish status", "error", err)
		return
	}
	a.mu.Lock()
	a.published, a.publishedAt = key, time.Now()
	a.mu.Unlock()
}

// Status is the last computed status.
func (a *Agent) Status() agentconfig.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st
}

// Ready reports whether the agent has started: the certificate files were
// read once (loaded or not) and a first pass ran. It deliberately ignores
// whether the certificates are valid, the FE is reachable or the
// configuration is valid: the sidecar's readiness gates the whole pod, and
// every FE's agent reads the same certificate Secret, so a bad certificate
// would take every FE out of the client Service at once although the FEs
// still serve clients. Such problems go to the status annotation (TLSReady
// through the hooks) and the metrics (alerts) instead.
func (a *Agent) Ready() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.material == nil && a.materialErr == nil:
		return errors.New("certificates not read yet")
	case a.st.UpdatedAt == "":
		// Not lastLoop, which is set when a pass starts: ready only once
		// a pass has published what it found (publish stamps UpdatedAt).
		return errors.New("no pass yet")
	}
	return nil
}

// Live reports whether the control loop still turns.
func (a *Agent) Live() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lastLoop.IsZero() {
		return nil
	}
	if limit := 2*a.opts.Interval + a.opts.PassTimeout; time.Since(a.lastLoop) > limit {
		return fmt.Errorf("control loop stuck: last pass started %s ago", time.Since(a.lastLoop).Round(time.Second))
	}
	return nil
}
