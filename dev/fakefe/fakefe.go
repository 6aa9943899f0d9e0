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

// Package fakefe is a MySQL-protocol server that speaks the part of the
// StarRocks FE dialect the agent uses: SHOW FRONTENDS/BACKENDS, ALTER SYSTEM
// ADD FOLLOWER/BACKEND, DECOMMISSION/DROP BACKEND, ADMIN SHOW/SET FRONTEND
// CONFIG, information_schema.be_configs, and the account statements of
// accounts.go (users with mysql_native_password, built-in roles, privilege
// checks), databases, roles and grants (grants.go) and a few table
// statements checked against them (data.go), and backup and restore
// (backup.go: repositories, BACKUP/RESTORE jobs, snapshots as real objects
// on an S3 server such as dev/s3server). It enforces TLS like
// ssl_force_secure_transport (error 5205 for plaintext clients that are not
// on 127.0.0.1) and records for every connection whether it used TLS. The
// result columns are deliberately not in StarRocks' order, so a client that
// reads them by position fails. Built on vitess.io/vitess/go/mysql; test
// tooling, never linked into the agent.
//
// What the FE alone decides is tested on the real FE (dev/realfe); the fake
// stays for what needs a BE (the tests run none: BE membership, tablets,
// BE configuration, backups), for FEs that come and go, and for machines
// without the FE's source archive, root or a JDK, where the real-FE tests
// skip. It is kept honest by TestAnswersAsTheRealFEDoes: the FE answers the
// agent relies on (strict_test.go) run against a real FE, and the
// statements both answer (conformance_test.go) are sent to both and must
// agree in error numbers and texts, columns, rows and the shape of values.
//
// What it does not check, so a test on it cannot show it (the real FE's
// tests do, where they can):
//   - statements beyond those above (1064 "fakefe: unsupported
//     statement"), prepared statements, several statements at once, session
//     variables, and SQL beyond the shapes it parses: StarRocks' grammar
//     accepts and refuses more;
//   - privileges beyond the built-in roles' NODE, OPERATE, GRANT and UPDATE
//     and the object privileges on databases, all tables, all views and all
//     materialized views of default_catalog: no external catalog (a
//     catalog-qualified name is an unknown catalog), no WITH GRANT OPTION,
//     no function, resource or warehouse privileges, no IMPERSONATE, no row
//     or column policies;
//   - passwords other than mysql_native_password, LDAP or other
//     authentication plugins, password policies and locks;
//   - the values of FE configuration keys a test did not set (it knows no
//     defaults, aliases included), and whether a change reaches other FEs
//     beyond the 5101 of a forwarded ADMIN SET;
//   - leader election: the FE that bootstrapped stays the leader; no edit
//     log, no image but the file CREATE IMAGE names, nothing replayed;
//   - query planning and execution: tables and partitions are names with
//     replication numbers and tablet counts, no data, no scans, no load
//     jobs; a BE's liveness is what a test sets or, with Heartbeat, whether
//     its heartbeat port accepts a connection (a real FE needs its Thrift
//     answer);
//   - backups: snapshots are objects on the S3 server with the names and
//     metadata the agent reads, not StarRocks' snapshot format; timing and
//     retries of S3 are not StarRocks';
//   - HTTP (8030, 8443) and metrics: the local node's stand-in serves
//     /api/health only (dev/cmd/fakefe).
package fakefe

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/replication"
	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
	querypb "vitess.io/vitess/go/vt/proto/query"
	"vitess.io/vitess/go/vt/vtenv"
)

// ErrSecureTransportRequired is the StarRocks error number for a plaintext
// client when ssl_force_secure_transport=true.
const ErrSecureTransportRequired = 5205

// ErrSetConfigFailed is fe-core ErrorCode ERROR_SET_CONFIG_FAILED: ADMIN
// SET FRONTEND CONFIG could not be forwarded to every FE.
const ErrSetConfigFailed = 5101

// Frontend is one row of SHOW FRONTENDS.
type Frontend struct {
	Host        string
	EditLogPort int
	// Role is LEADER, FOLLOWER or OBSERVER.
	Role  string
	Alive bool
	// Version is the Version column ("" reads as NULL); see nodes.go.
	Version string
}

// Backend is one row of SHOW BACKENDS.
type Backend struct {
	ID             int64
	Host           string
	HeartbeatPort  int
	Alive          bool
	Decommissioned bool
	TabletNum      int64
	// Version is the Version column; ClusterID is the cluster id on the
	// BE's volume (0: the FE's own); see nodes.go.
	Version   string
	ClusterID int64
}

// FEConfig is one FE configuration item.
type FEConfig struct {
	Value   string
	Mutable bool
}

// ConnInfo describes one accepted connection.
type ConnInfo struct {
	Remote string
	TLS    bool
	User   string
}

// Options configure a Server.
type Options struct {
	// TLS is the server TLS configuration; nil serves plaintext only. It is
	// not capped at TLS 1.2: the FE offers TLS 1.3 too. fe-core
	// mysql.ssl.SSLContextLoader asks for SSLContext.getInstance("TLSv1.2"),
	// which in the JDK limits only a client's default protocols; a server
	// engine from it (ConnectContext.enableSSL, SSLChannelImp sets no
	// protocols) enables TLSv1.3 and TLSv1.2, and 4.x newServerEngine sets
	// getSupportedSSLParameters(), TLSv1.3 included.
	TLS *tls.Config
	// RootPassword of user root; empty like a fresh FE.
	RootPassword string
	// ForceSecureTransport is ssl_force_secure_transport.
	ForceSecureTransport bool
	// ListenAddr, default 127.0.0.1:0.
	ListenAddr string
	// Heartbeat: nodes are alive only as Heartbeat finds them (a BE or FE
	// added with ALTER SYSTEM starts not alive until its first heartbeat
	// answers, as in fe-core); without it tests set Alive themselves.
	Heartbeat bool
	// NodeVersion is the Version column a node gets when it answers a
	// heartbeat, the leader itself included: StarRocks takes it from the
	// heartbeat response (fe-core system/HeartbeatMgr). Empty leaves the
	// versions as set.
	NodeVersion string
	// AfterStatement, when set, runs after every statement that succeeded,
	// outside the server's lock (the stand-in persists its state there).
	AfterStatement func()
}

// Server is a running fake FE.
type Server struct {
	mysql.UnimplementedHandler
	listener *mysql.Listener
	env      *vtenv.Environment

	heartbeat      bool
	nodeVersion    string
	afterStatement func()

	mu    sync.Mutex
	force bool
	// authOff is enable_auth_check = false.
	authOff    bool
	users      map[string]*account
	frontends  []Frontend
	backends   []Backend
	nextBackID int64
	feConfig   map[string]FEConfig
	// beConfig[beID][name] = value; new BEs start with beDefaults.
	beConfig   map[int64]map[string]string
	beDefaults map[string]string
	conns      []ConnInfo
	refused    []ConnInfo
	// sessions by connection id: the roles each activated at login.
	sessions   map[uint32]*session
	statements []string
	// tables (replication.go), sorted by database and name.
	tables  []Table
	dropped []string // nodes.go
	// selfDropped are the BEs the FE dropped itself after their
	// decommission (dropDrainedBackends).
	selfDropped []string
	// keepDecommissioned is drop_backend_after_decommission=false.
	keepDecommissioned bool
	images             int // nodes.go
	// imagePending: CREATE IMAGE asked for an image not written yet.
	imagePending  bool
	imagesWritten int
	newestImage   int64 // nodes.go NewestImage
	// imageMetaDirs are FE meta directories the checkpoint writes its
	// images into (SetImageMetaDirs), as the leader and the followers
	// that download it would.
	imageMetaDirs []string
	// unhealthyTablets is UnhealthyTabletNum of SHOW PROC '/statistic'.
	unhealthyTablets int64

	grants *grantState // grants.go
	refuse []refusal   // data.go

	bk *backupState // backup.go
	// closed stops the backup jobs' goroutines (jobs) when the test ends.
	closed chan struct{}
	jobs   sync.WaitGroup
	// closeOnce: Close may run twice (a test's cleanup and a stand-in's stop).
	closeOnce sync.Once

	computeNodes []ComputeNode // computenodes.go
}

// Start listens and serves until t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("fakefe: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// New listens and serves until Close: the FE stand-in's main
// (dev/cmd/fakefe) runs it outside a test.
func New(opts Options) (*Server, error) {
	if opts.ListenAddr == "" {
		opts.ListenAddr = "127.0.0.1:0"
	}
	s := &Server{
		env:            vtenv.NewTestEnv(),
		force:          opts.ForceSecureTransport,
		heartbeat:      opts.Heartbeat,
		nodeVersion:    opts.NodeVersion,
		afterStatement: opts.AfterStatement,
		users:          map[string]*account{RootUser: newAccount(opts.RootPassword, RoleRoot)},
		feConfig:       map[string]FEConfig{},
		sessions:       map[uint32]*session{},
		beConfig:       map[int64]map[string]string{},
		beDefaults:     map[string]string{},
		nextBackID:     10001,
		closed:         make(chan struct{}),
	}
	nl, err := net.Listen("tcp", opts.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	l, err := mysql.NewListenerWithConfig(mysql.ListenerConfig{
		Listener:   nl,
		AuthServer: &authServer{s: s},
		Handler:    s,
		// TLS needs the buffered reader that vitess only creates with a size.
		ConnReadBufferSize: 16 * 1024,
	})
	if err != nil {
		nl.Close()
		return nil, fmt.Errorf("listener: %w", err)
	}
	l.ServerVersion = "8.0.33"
	if opts.TLS != nil {
		l.TLSConfig.Store(opts.TLS)
	}
	s.listener = l
	go l.Accept()
	return s, nil
}

// Close stops listening.
// Close stops listening, then ends the backup and restore jobs and waits
// for them.
func (s *Server) Close() {
	s.listener.Close()
	s.closeOnce.Do(func() { close(s.closed) })
	s.jobs.Wait()
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// SetAuthCheck is the FE's enable_auth_check (fe-core common/Config, read
// at start): off, an existing user logs in with any password and an
// unknown one still does not (authentication/AuthenticationHandler
// .authenticateWithNative).
func (s *Server) SetAuthCheck(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authOff = !on
}

// SetFrontends replaces the FE list.
func (s *Server) SetFrontends(fes ...Frontend) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frontends = append([]Frontend(nil), fes...)
}

// Frontends returns the FE list.
func (s *Server) Frontends() []Frontend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Frontend(nil), s.frontends...)
}

// SetFrontendAlive marks a listed FE as alive (it "joined").
func (s *Server) SetFrontendAlive(host string, alive bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.frontends {
		if s.frontends[i].Host == host {
			s.frontends[i].Alive = alive
		}
	}
}

// AddBackendRow adds a BE as if it had been added earlier.
func (s *Server) AddBackendRow(b Backend) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addBackend(b)
}

func (s *Server) addBackend(b Backend) {
	if b.ID == 0 {
		b.ID = s.nextBackID
		s.nextBackID++
	}
	s.backends = append(s.backends, b)
	cfg := map[string]string{}
	for k, v := range s.beDefaults {
		cfg[k] = v
	}
	s.beConfig[b.ID] = cfg
}

// Backends returns the BE list.
func (s *Server) Backends() []Backend {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Backend(nil), s.backends...)
}

// SetTabletNum sets a BE's tablet count (data migrating away).
func (s *Server) SetTabletNum(host string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.backends {
		if s.backends[i].Host == host {
			s.backends[i].TabletNum = n
		}
	}
}

// SetFEConfig defines an FE configuration item.
func (s *Server) SetFEConfig(key, value string, mutable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feConfig[key] = FEConfig{Value: value, Mutable: mutable}
}

// FEConfigValue returns an FE configuration value.
func (s *Server) FEConfigValue(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feConfig[key].Value
}

// SetBEConfigDefault defines a BE configuration item for existing and new BEs.
func (s *Server) SetBEConfigDefault(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beDefaults[name] = value
	for _, cfg := range s.beConfig {
		cfg[name] = value
	}
}

// BEConfigValues returns name's value per BE id.
func (s *Server) BEConfigValues(name string) map[int64]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int64]string{}
	for id, cfg := range s.beConfig {
		out[id] = cfg[name]
	}
	return out
}

// RootPassword is the current root password.
func (s *Server) RootPassword() string {
	pw, _ := s.Password(RootUser)
	return pw
}

// Connections returns the accepted connections.
func (s *Server) Connections() []ConnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ConnInfo(nil), s.conns...)
}

// Refused returns the connections refused with 5205.
func (s *Server) Refused() []ConnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ConnInfo(nil), s.refused...)
}

// Statements returns every statement received, in order.
func (s *Server) Statements() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.statements...)
}

// isLocal mirrors the FE's exemption from ssl_force_secure_transport
// (fe-core mysql/MysqlProto.isRemoteIPLocalhost): the peer's address
// contains "127.0.0.1". ::1 is not exempt, nor 127.0.0.2, which is how tests
// reach the "remote" case.
func isLocal(addr net.Addr) bool {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	return strings.Contains(host, "127.0.0.1")
}

type authServer struct{ s *Server }

func (a *authServer) AuthMethods() []mysql.AuthMethod {
	return []mysql.AuthMethod{mysql.NewMysqlNativeAuthMethod(a, a)}
}

func (a *authServer) DefaultAuthMethodDescription() mysql.AuthMethodDescription {
	return mysql.MysqlNativePassword
}

func (a *authServer) HandleUser(string) bool { return true }

func (a *authServer) UserEntryWithHash(c *mysql.Conn, salt []byte, user string, authResponse []byte, remote net.Addr) (mysql.Getter, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	info := ConnInfo{Remote: remote.String(), TLS: c.TLSEnabled(), User: user}
	if s.force && !c.TLSEnabled() && !isLocal(remote) {
		s.refused = append(s.refused, info)
		// fe-core common/ErrorCode.java ERR_SECURE_TRANSPORT_REQUIRED (SQL
		// state HY000), reported by mysql/MysqlProto.negotiate.
		return nil, sqlerror.NewSQLError(ErrSecureTransportRequired, "HY000",
			"Connections using insecure transport are prohibited")
	}
	if u, ok := s.users[user]; ok {
		if s.authOff {
			return &mysql.StaticUserData{}, nil
		}
		if u.password == "" && u.hash == nil && len(authResponse) == 0 {
			return &mysql.StaticUserData{}, nil
		}
		if u.password != "" && bytes.Equal(mysql.ScrambleMysqlNativePassword(salt, []byte(u.password)), authResponse) {
			return &mysql.StaticUserData{}, nil
		}
		// Created with IDENTIFIED BY PASSWORD '*hex' (grants.go).
		if u.hash != nil && mysql.VerifyHashedMysqlNativePassword(authResponse, salt, u.hash) {
			return &mysql.StaticUserData{}, nil
		}
	}
	using := "YES"
	if len(authResponse) == 0 {
		using = "NO"
	}
	return nil, sqlerror.NewSQLErrorf(sqlerror.ERAccessDeniedError, sqlerror.SSAccessDeniedError,
		"Access denied for user '%s' (using password: %s)", user, using)
}

// ConnectionReady records the connection after a successful handshake and
// activates its roles, once (accounts.go, session).
func (s *Server) ConnectionReady(c *mysql.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns = append(s.conns, ConnInfo{Remote: c.RemoteAddr().String(), TLS: c.TLSEnabled(), User: c.User})
	sess := &session{roles: map[string]bool{}}
	if u := s.users[c.User]; u != nil {
		sess.roles = u.loginRoles()
	}
	s.sessions[c.ConnectionID] = sess
}

// ConnectionClosed forgets the session.
func (s *Server) ConnectionClosed(c *mysql.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, c.ConnectionID)
}

var (
	reShowFrontends  = regexp.MustCompile(`(?i)^show\s+frontends$`)
	reShowBackends   = regexp.MustCompile(`(?i)^show\s+backends$`)
	reAddFollower    = regexp.MustCompile(`(?i)^alter\s+system\s+add\s+follower\s+["']([^"':]+):(\d+)["']$`)
	reAddBackend     = regexp.MustCompile(`(?i)^alter\s+system\s+add\s+backend\s+["']([^"':]+):(\d+)["']$`)
	reDecommission   = regexp.MustCompile(`(?i)^alter\s+system\s+decommission\s+backend\s+["']([^"':]+):(\d+)["']$`)
	reCancelDecom    = regexp.MustCompile(`(?i)^cancel\s+decommission\s+backend\s+["']([^"':]+):(\d+)["']$`)
	reDropBackend    = regexp.MustCompile(`(?i)^alter\s+system\s+drop\s+backend\s+["']([^"':]+):(\d+)["']$`)
	reShowFEConfig   = regexp.MustCompile(`(?i)^admin\s+show\s+frontend\s+config\s+like\s+'((?:[^'\\]|\\.)*)'$`)
	reSetFEConfig    = regexp.MustCompile(`(?i)^admin\s+set\s+frontend\s+config\s*\(\s*"([^"]+)"\s*=\s*"((?:[^"\\]|\\.)*)"\s*\)$`)
	reSelectBEConfig = regexp.MustCompile(`(?i)^select\s+be_id\s*,\s*name\s*,\s*value\s+from\s+information_schema\.be_configs\s+where\s+name\s*=\s*'((?:[^'\\]|\\.)*)'$`)
	reUpdateBEConfig = regexp.MustCompile(`(?i)^update\s+information_schema\.be_configs\s+set\s+value\s*=\s*'((?:[^'\\]|\\.)*)'\s+where\s+name\s*=\s*'((?:[^'\\]|\\.)*)'$`)
	reSelectOne      = regexp.MustCompile(`(?i)^select\s+1$`)
)

// dropDrainedBackends is the FE's own cleanup of a finished decommission:
// fe-core alter/SystemHandler.runAfterCatalogReady (runAlterJobV2) drops
// every decommissioned BE that holds no tablet when
// drop_backend_after_decommission is true, its default. StarRocks runs it
// in a daemon; here it runs before each statement, as if the daemon had
// run since the last one.
func (s *Server) dropDrainedBackends() {
	if s.keepDecommissioned {
		return
	}
	kept := s.backends[:0]
	for _, b := range s.backends {
		if b.Decommissioned && b.TabletNum == 0 {
			delete(s.beConfig, b.ID)
			s.selfDropped = append(s.selfDropped, b.Host)
			continue
		}
		kept = append(kept, b)
	}
	s.backends = kept
}

// ComQuery answers one statement.
func (s *Server) ComQuery(c *mysql.Conn, query string, callback func(*sqltypes.Result) error) error {
	q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";"))
	s.mu.Lock()
	s.statements = append(s.statements, q)
	s.dropDrainedBackends()
	// The caller's privileges are those of its session (accounts.go).
	me := s.users[c.User]
	if me != nil {
		me.sess = s.sessions[c.ConnectionID]
	}
	res, err := s.exec(c, q)
	if me != nil {
		me.sess = nil
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if s.afterStatement != nil {
		s.afterStatement()
	}
	return callback(res)
}

func (s *Server) exec(c *mysql.Conn, q string) (*sqltypes.Result, error) {
	ok := &sqltypes.Result{RowsAffected: 0}
	if err := s.refusal(q); err != nil {
		return nil, err
	}
	if res, handled, err := s.execBackup(c, q); handled {
		return res, err
	}
	if res, handled, err := s.execAccount(c, q); handled {
		return res, err
	}
	if res, handled, err := s.execGrants(c, q); handled {
		return res, err
	}
	if res, handled, err := s.execData(c, q); handled {
		return res, err
	}
	if res, handled, err := execSession(q); handled {
		return res, err
	}
	if err := s.authorize(c.User, q); err != nil {
		return nil, err
	}
	if res, handled, err := s.execReplication(c, q); handled {
		return res, err
	}
	if res, handled, err := s.execNodes(q); handled {
		return res, err
	}
	if res, handled, err := s.execComputeNodes(q); handled {
		return res, err
	}
	if m := reShowFrontends.FindStringSubmatch(q); m != nil {
		// StarRocks order: Name, IP, EditLogPort, HttpPort, QueryPort, RpcPort, Role, ..., Alive, ...
		r := &sqltypes.Result{Fields: fields("Alive", "Role", "QueryPort", "IP", "EditLogPort", "Name", "IsHelper", "Join", "Version")}
		for i, f := range s.frontends {
			r.Rows = append(r.Rows, row(boolStr(f.Alive), f.Role, "9030", f.Host, strconv.Itoa(f.EditLogPort),
				fmt.Sprintf("%s_%d_%d", f.Host, f.EditLogPort, i), boolStr(f.Role == "LEADER"), "true", nullable(f.Version)))
		}
		return r, nil
	}
	if reShowBackends.MatchString(q) {
		// StarRocks order: BackendId, IP, HeartbeatPort, BePort, ..., Alive, SystemDecommissioned, ..., TabletNum, ...
		// A BE's Version is empty until its first heartbeat (fe-core
		// system/ComputeNode starts it as ""); an FE's reads NULL
		// (common/proc/FrontendsProcNode).
		r := &sqltypes.Result{Fields: fields("TabletNum", "SystemDecommissioned", "Alive", "HeartbeatPort", "IP", "BackendId", "BePort", "Version", "ErrMsg")}
		for _, b := range s.backends {
			alive, errMsg := s.backendAlive(b)
			r.Rows = append(r.Rows, row(strconv.FormatInt(b.TabletNum, 10), boolStr(b.Decommissioned), boolStr(alive),
				strconv.Itoa(b.HeartbeatPort), b.Host, strconv.FormatInt(b.ID, 10), "9060", b.Version, errMsg))
		}
		return r, nil
	}
	if m := reAddFollower.FindStringSubmatch(q); m != nil {
		for _, f := range s.frontends {
			if f.Host == m[1] {
				return nil, sqlerror.NewSQLErrorf(1064, "HY000", "frontend already exists: %s", m[1])
			}
		}
		port, _ := strconv.Atoi(m[2])
		s.frontends = append(s.frontends, Frontend{Host: m[1], EditLogPort: port, Role: "FOLLOWER"})
		return ok, nil
	}
	if m := reAddBackend.FindStringSubmatch(q); m != nil {
		if s.backendIndex(m[1]) >= 0 {
			return nil, sqlerror.NewSQLErrorf(1064, "HY000", "backend already exists: %s", m[1])
		}
		port, _ := strconv.Atoi(m[2])
		s.addBackend(Backend{Host: m[1], HeartbeatPort: port, Alive: !s.heartbeat})
		return ok, nil
	}
	if m := reDecommission.FindStringSubmatch(q); m != nil {
		i := s.backendIndex(m[1])
		if i < 0 {
			// fe-core system/SystemInfoService.dropBackends.
			return nil, sqlerror.NewSQLErrorf(1064, "HY000", "backend does not exists[%s:%s]", m[1], m[2])
		}
		if err := s.checkDecommission(i); err != nil {
			return nil, err
		}
		s.backends[i].Decommissioned = true
		return ok, nil
	}
	if m := reCancelDecom.FindStringSubmatch(q); m != nil {
		i := s.backendIndex(m[1])
		if i < 0 {
			// fe-core system/SystemInfoService.dropBackends.
			return nil, sqlerror.NewSQLErrorf(1064, "HY000", "backend does not exists[%s:%s]", m[1], m[2])
		}
		s.backends[i].Decommissioned = false
		return ok, nil
	}
	if m := reDropBackend.FindStringSubmatch(q); m != nil {
		i := s.backendIndex(m[1])
		if i < 0 {
			// fe-core system/SystemInfoService.dropBackends.
			return nil, sqlerror.NewSQLErrorf(1064, "HY000", "backend does not exists[%s:%s]", m[1], m[2])
		}
		delete(s.beConfig, s.backends[i].ID)
		s.backends = append(s.backends[:i], s.backends[i+1:]...)
		return ok, nil
	}
	if m := reShowFEConfig.FindStringSubmatch(q); m != nil {
		like := likeRegexp(unescape(m[1]))
		r := &sqltypes.Result{Fields: fields("Value", "IsMutable", "Key", "Type", "AliasNames", "Comment")}
		keys := make([]string, 0, len(s.feConfig))
		for k := range s.feConfig {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			if like.MatchString(key) {
				cfg := s.feConfig[key]
				r.Rows = append(r.Rows, row(cfg.Value, boolStr(cfg.Mutable), key, "String", "[]", ""))
			}
		}
		return r, nil
	}
	if m := reSetFEConfig.FindStringSubmatch(q); m != nil {
		cfg, found := s.feConfig[m[1]]
		if !found || !cfg.Mutable {
			// fe-core common/ConfigBase.setMutableConfig looks the key up
			// among the mutable ones only: ErrorCode.ERROR_CONFIG_NOT_EXIST's
			// text, sent as 1064 (InvalidConfException carries no code to
			// the client).
			return nil, sqlerror.NewSQLErrorf(1064, "HY000", "Config '%s' does not exist or is not mutable", m[1])
		}
		// fe-core common/ConfigBase.setConfig: the FE sets the value, then
		// forwards it to every other FE it lists (one shared value here);
		// one it cannot reach makes the statement fail with
		// ERROR_SET_CONFIG_FAILED (5101, F0000), the value set where it
		// got through. The text after "Set config failed: " is fakefe's.
		cfg.Value = strings.ReplaceAll(m[2], `\"`, `"`)
		s.feConfig[m[1]] = cfg
		var unreachable []string
		for _, fe := range s.frontends {
			if !fe.Alive {
				unreachable = append(unreachable, fe.Host)
			}
		}
		if len(unreachable) > 0 {
			return nil, sqlerror.NewSQLErrorf(ErrSetConfigFailed, "F0000", "Set config failed: cannot reach fe %s", strings.Join(unreachable, ", "))
		}
		return ok, nil
	}
	if m := reSelectBEConfig.FindStringSubmatch(q); m != nil {
		if err := s.noBackendAlive(); err != nil {
			return nil, err
		}
		name := unescape(m[1])
		r := &sqltypes.Result{Fields: fields("NAME", "VALUE", "BE_ID")}
		ids := make([]int64, 0, len(s.beConfig))
		for id := range s.beConfig {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			if v, found := s.beConfig[id][name]; found {
				r.Rows = append(r.Rows, row(name, v, strconv.FormatInt(id, 10)))
			}
		}
		// The agent asked for BE_ID, NAME, VALUE: answer in that order, as
		// a SELECT does; the column-order check is on the SHOW statements.
		return reorder(r, "BE_ID", "NAME", "VALUE"), nil
	}
	if m := reUpdateBEConfig.FindStringSubmatch(q); m != nil {
		if err := s.noBackendAlive(); err != nil {
			return nil, err
		}
		value, name := unescape(m[1]), unescape(m[2])
		var n uint64
		for _, cfg := range s.beConfig {
			if _, found := cfg[name]; found {
				cfg[name] = value
				n++
			}
		}
		return &sqltypes.Result{RowsAffected: n}, nil
	}
	if reSelectOne.MatchString(q) {
		return &sqltypes.Result{Fields: fields("1"), Rows: [][]sqltypes.Value{row("1")}}, nil
	}
	return nil, sqlerror.NewSQLErrorf(1064, "42000", "fakefe: unsupported statement %q", q)
}

func (s *Server) backendIndex(host string) int {
	for i, b := range s.backends {
		if b.Host == host {
			return i
		}
	}
	return -1
}

func fields(names ...string) []*querypb.Field {
	out := make([]*querypb.Field, len(names))
	for i, n := range names {
		out[i] = &querypb.Field{Name: n, Type: querypb.Type_VARCHAR, Charset: 33}
	}
	return out
}

func row(values ...string) []sqltypes.Value {
	out := make([]sqltypes.Value, len(values))
	for i, v := range values {
		out[i] = sqltypes.NewVarChar(v)
	}
	return out
}

func reorder(r *sqltypes.Result, names ...string) *sqltypes.Result {
	idx := make([]int, len(names))
	for i, n := range names {
		for j, f := range r.Fields {
			if f.Name == n {
				idx[i] = j
			}
		}
	}
	out := &sqltypes.Result{Fields: fields(names...)}
	for _, rw := range r.Rows {
		nr := make([]sqltypes.Value, len(idx))
		for i, j := range idx {
			nr[i] = rw[j]
		}
		out.Rows = append(out.Rows, nr)
	}
	return out
}

// likeRegexp turns a SQL LIKE pattern into a regexp (% any run, _ one char).
func likeRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?i)^")
	for _, r := range p {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// unescape reverses the backslash escaping of a client-interpolated string.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '0':
			b.WriteByte(0)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'Z':
			b.WriteByte(0x1a)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// ComQueryMulti is not used: the listener runs without multi-statements.
func (s *Server) ComQueryMulti(*mysql.Conn, string, func(sqltypes.QueryResponse, bool, bool) error) error {
	return sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "fakefe: multi-statements not supported")
}

// ComPrepare is refused: the agent interpolates parameters client-side.
func (s *Server) ComPrepare(*mysql.Conn, string) ([]*querypb.Field, uint16, error) {
	return nil, 0, sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "fakefe: prepared statements not supported")
}

// ComStmtExecute is refused, see ComPrepare.
func (s *Server) ComStmtExecute(*mysql.Conn, *mysql.PrepareData, func(*sqltypes.Result) error) error {
	return sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "fakefe: prepared statements not supported")
}

// ComRegisterReplica is not part of the FE dialect.
func (s *Server) ComRegisterReplica(*mysql.Conn, string, uint16, string, string) error {
	return sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "fakefe: replication not supported")
}

// ComBinlogDump is not part of the FE dialect.
func (s *Server) ComBinlogDump(*mysql.Conn, string, uint32) error {
	return sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "fakefe: replication not supported")
}

// ComBinlogDumpGTID is not part of the FE dialect.
func (s *Server) ComBinlogDumpGTID(*mysql.Conn, string, uint64, replication.GTIDSet, uint16) error {
	return sqlerror.NewSQLError(sqlerror.ERUnknownError, sqlerror.SSUnknownSQLState, "fakefe: replication not supported")
}

// WarningCount is always zero.
func (s *Server) WarningCount(*mysql.Conn) uint16 { return 0 }

// Env is the vitess environment the listener parses with.
func (s *Server) Env() *vtenv.Environment { return s.env }
