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

// Package agentconfig is the contract between the hooks, which compute the
// desired state of an instance, and the agent sidecar, which applies it. The
// hooks put a Config into the instance values, the templates write it as JSON
// into the instance ConfigMap (key FileName), and the agent reads that file.
package agentconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// FileName is the ConfigMap key and file name of the agent configuration.
const FileName = "agent.json"

// StarRocks accounts. root is the module's alone: its password is in the
// agent's Secret and set before any client port opens. The agent works as
// AgentUser; the team gets AdminUser (roles db_admin and user_admin).
const (
	RootUser  = "root"
	AgentUser = "d8_agent"
	AdminUser = "admin"
)

// Keys of the credentials Secrets. The agent's Secret has UsernameKey,
// PasswordKey and RootPasswordKey; the team's has UsernameKey and PasswordKey.
const (
	UsernameKey     = "username"
	PasswordKey     = "password"
	RootPasswordKey = "root-password"
)

// Default StarRocks ports the agent talks to.
const (
	QueryPort     = 9030
	EditLogPort   = 9010
	HeartbeatPort = 9050
	// ComputeHTTPPort is a CN's be_http_port (webserver_port in cn.conf).
	ComputeHTTPPort = 8040
)

// Config is everything the agent needs to know about the desired instance.
type Config struct {
	// Instance is namespace/name of the Starrocks object, for logs and metrics.
	Instance string `json:"instance"`
	// QueryHost is the FQDN of the instance's client Service: the agent dials
	// it (never 127.0.0.1) and verifies it as the TLS server name.
	QueryHost string `json:"queryHost"`
	// QueryPort is the MySQL protocol port of the FE.
	QueryPort int `json:"queryPort"`
	// Frontends are the stable FQDNs of the desired FE followers, in ordinal
	// order; the first one bootstraps the cluster.
	Frontends []string `json:"frontends"`
	// EditLogPort is the FE edit log port used in ALTER SYSTEM ADD FOLLOWER.
	EditLogPort int `json:"editLogPort"`
	// Backends are the stable FQDNs of the desired BEs, in ordinal order.
	Backends []string `json:"backends"`
	// HeartbeatPort is the BE heartbeat port used in ALTER SYSTEM ADD BACKEND.
	HeartbeatPort int `json:"heartbeatPort"`
	// FrontendConfig holds runtime-mutable fe.conf keys and their desired
	// values (ADMIN SET FRONTEND CONFIG).
	FrontendConfig map[string]string `json:"frontendConfig"`
	// BackendConfig holds runtime-mutable be.conf keys and their desired
	// values (UPDATE information_schema.be_configs).
	BackendConfig map[string]string `json:"backendConfig"`
	// Bootstrapped is true once the instance's FE cluster exists (the hooks
	// derive it from the instance: see pkg/desired/bootstrap.go). From then
	// on an FE with an empty meta directory joins the existing leader and
	// never starts a new cluster of its own, not even the first FE.
	Bootstrapped bool `json:"bootstrapped,omitempty"`
	// CreateImage, when set, asks the FE leader's agent to run ALTER
	// SYSTEM CREATE IMAGE once for this token (the FE StatefulSet's update
	// revision during a rollout) and report it in
	// MembershipStatus.ImageCreated: StarRocks asks for a fresh metadata
	// image before FEs are upgraded (pkg/desired/rollout.go).
	CreateImage string `json:"createImage,omitempty"`
	// TabletHealth asks the FE leader's agent to read SHOW PROC
	// '/statistic' (MembershipStatus.Tablets): set while a BE restart of a
	// rollout is pending. StarRocks walks every tablet of every database
	// for it, under each database's read lock (fe-core common/proc/
	// StatisticProcDir), too much to ask every pass of an instance at rest.
	TabletHealth bool `json:"tabletHealth,omitempty"`
	// Grants are the databases, roles and users the instance declares
	// (spec.databases, spec.roles, spec.users), applied by the FE leader's
	// agent. Nil (a configuration from before this field) touches nothing;
	// empty lists drop the users and roles the module made.
	Grants *Grants `json:"grants,omitempty"`
	// Backup is the instance's repository and the backup sets to run or
	// delete (backup.go); nil without spec.backup.
	Backup *BackupConfig `json:"backup,omitempty"`
	// Restore asks for a restore into this new instance (spec.restore).
	Restore *RestoreConfig `json:"restore,omitempty"`
	// BackupHold, when set (BackupHold* reason), starts no new BACKUP or
	// RESTORE job: a rollout or a BE scale-in is pending.
	BackupHold string `json:"backupHold,omitempty"`
	// BackupJobTimeoutSeconds is the timeout property of every BACKUP and
	// RESTORE job (the class's spec.backup.jobTimeout); 0: StarRocks'
	// default of a day. Between MinBackupJobTimeoutSeconds and
	// MaxBackupJobTimeoutSeconds.
	BackupJobTimeoutSeconds int64 `json:"backupJobTimeoutSeconds,omitempty"`
	// SharedData is set on a shared-data instance (shareddata.go), nil on
	// a shared-nothing one.
	SharedData *SharedData `json:"sharedData,omitempty"`
}

// Grants is what the team declares, in the form the agent applies.
type Grants struct {
	Databases []string     `json:"databases"`
	Roles     []GrantsRole `json:"roles"`
	Users     []GrantsUser `json:"users"`
}

// GrantsRole is one declared role.
type GrantsRole struct {
	Name string `json:"name"`
	// Roles it inherits: declared roles or db_admin, user_admin, public.
	Roles      []string          `json:"roles,omitempty"`
	Privileges []GrantsPrivilege `json:"privileges,omitempty"`
}

// GrantsPrivilege is privileges on one database (Object "Database") or on
// all its tables, views or materialized views (Object "AllTables",
// "AllViews", "AllMaterializedViews"; the agent's grants.ScopeOf), with '_'
// for a space (CREATE_TABLE).
type GrantsPrivilege struct {
	Database   string   `json:"database"`
	Object     string   `json:"object"`
	Privileges []string `json:"privileges"`
}

// GrantsUser is one declared user.
type GrantsUser struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles,omitempty"`
	// SecretName is the user's connection Secret in the instance's
	// namespace (UserSecretName). The hooks create it; with no
	// PasswordSecret it holds the generated password, which the agent
	// reads; the agent keeps its other keys (UserSecret*Key) current.
	SecretName string `json:"secretName"`
	// PasswordSecret is the team's Secret with the password
	// (spec.users[].passwordSecretRef): the agent reads it and copies the
	// password into SecretName.
	PasswordSecret *SecretKeyRef `json:"passwordSecret,omitempty"`
}

// SecretKeyRef is a key of a Secret in the instance's namespace.
type SecretKeyRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Keys of a user's connection Secret (GrantsUser.SecretName).
const (
	UserSecretUsernameKey = "username"
	UserSecretPasswordKey = "password"
	UserSecretHostKey     = "host"
	UserSecretPortKey     = "port"
	UserSecretCAKey       = "ca.crt"
	// UserSecretDSNKey: a go-sql-driver/mysql DSN,
	// user:password@tcp(host:9030)/?tls=starrocks (the client registers
	// ca.crt under the TLS config name "starrocks").
	UserSecretDSNKey = "dsn"
	// UserSecretJDBCKey: jdbc:mysql://host:9030/?sslMode=VERIFY_IDENTITY
	// (the client trusts ca.crt); no password in it.
	UserSecretJDBCKey = "jdbc-url"
)

// Load reads and checks a Config file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read agent config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("parse agent config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("agent config %s: %w", path, err)
	}
	return &c, nil
}

// Validate reports the first missing or impossible field.
func (c *Config) Validate() error {
	switch {
	case c.QueryHost == "":
		return fmt.Errorf("queryHost is empty")
	case c.QueryPort <= 0 || c.QueryPort > 65535:
		return fmt.Errorf("queryPort %d is not a TCP port", c.QueryPort)
	case len(c.Frontends) == 0:
		return fmt.Errorf("frontends is empty: an instance has at least one FE")
	case c.EditLogPort <= 0 || c.EditLogPort > 65535:
		return fmt.Errorf("editLogPort %d is not a TCP port", c.EditLogPort)
	case c.HeartbeatPort <= 0 || c.HeartbeatPort > 65535:
		return fmt.Errorf("heartbeatPort %d is not a TCP port", c.HeartbeatPort)
	}
	return c.validateBackup()
}

// StatusAnnotation is the Pod annotation where the agent publishes Status as
// JSON; the hooks read it into the Starrocks conditions (TLSReady).
const StatusAnnotation = "managed-starrocks.deckhouse.io/agent-status"

// Status is what the agent reports about its pod's instance.
type Status struct {
	// TLS describes the certificate the agent sees mounted and uses.
	TLS TLSStatus `json:"tls"`
	// LastApply describes the last runtime configuration pass.
	LastApply ApplyStatus `json:"lastApply"`
	// Membership is set by the agent of the FE leader only.
	Membership *MembershipStatus `json:"membership,omitempty"`
	// Accounts says whether root's password is set and the module's and
	// the team's accounts exist (nil until the agent has checked).
	Accounts *AccountsStatus `json:"accounts,omitempty"`
	// Join says why this pod's FE is not running yet although its meta is
	// empty (nil otherwise): it rejoins the existing cluster or waits for
	// its leader (JoinReason*), never bootstrapping a second cluster.
	Join *JoinStatus `json:"join,omitempty"`
	// Users is set by the agent of the FE leader only, once it has
	// applied Config.Grants (nil otherwise).
	Users *UsersStatus `json:"users,omitempty"`
	// ImageJournalID is the journal id of the newest metadata image in
	// this pod's FE meta directory (image/image.<id>, image/v2/image.<id>),
	// 0 when there is none: the hooks restart FEs only once the leader's
	// new image has reached every FE.
	ImageJournalID int64 `json:"imageJournalId,omitempty"`
	// Backup and Restore are set by the agent of the FE leader only, about
	// the sets and the restore its Config names (backup.go).
	Backup  *BackupStatus  `json:"backup,omitempty"`
	Restore *RestoreStatus `json:"restore,omitempty"`
	// SharedData is set by the agent of the FE leader only, on a
	// shared-data instance (shareddatastatus.go).
	SharedData *SharedDataStatus `json:"sharedData,omitempty"`
	// UpdatedAt is when the agent wrote this status (RFC 3339).
	UpdatedAt string `json:"updatedAt"`
}

// TLSStatus is the state of the mounted serving certificate.
type TLSStatus struct {
	// Ready is true when the certificate and CA load, the chain verifies and
	// the agent's last TLS connection to the FE succeeded.
	Ready bool `json:"ready"`
	// NotAfter of the certificate (RFC 3339).
	NotAfter string `json:"notAfter,omitempty"`
	// Serial of the certificate, hex.
	Serial string `json:"serial,omitempty"`
	// Reason is a CamelCase word when not ready, e.g. CertificateMissing,
	// TLSMisconfigured.
	Reason string `json:"reason,omitempty"`
	// Message says what is wrong, for a person.
	Message string `json:"message,omitempty"`
}

// ApplyStatus is the result of the last runtime configuration pass.
type ApplyStatus struct {
	// Time of the pass (RFC 3339).
	Time string `json:"time,omitempty"`
	// Succeeded is true when every desired key holds its value.
	Succeeded bool `json:"succeeded"`
	// Applied lists the keys changed in that pass, as key=value.
	Applied []string `json:"applied,omitempty"`
	// Error of the pass, empty on success. Never contains secrets.
	Error string `json:"error,omitempty"`
	// Pending lists desired keys that could not be compared yet, as
	// be.key: BE configuration is read from a live BE, and a new instance
	// has none until its first BE joins. They do not fail the pass.
	Pending []string `json:"pending,omitempty"`
	// PendingMessage says why, for a person.
	PendingMessage string `json:"pendingMessage,omitempty"`
}

// AccountsStatus is the state of the StarRocks accounts the module manages.
type AccountsStatus struct {
	// Ready is true once root has a password (never the empty one of a
	// fresh FE), the agent logs in with its own account and the team's admin
	// account exists. The hooks open the client ports only after that.
	Ready bool `json:"ready"`
	// Reason is a CamelCase word when not ready.
	Reason string `json:"reason,omitempty"`
	// Message says what is wrong, for a person. Never contains secrets.
	Message string `json:"message,omitempty"`
}

// ReasonRootPasswordRefused is the AccountsStatus reason when the agent's
// account does not work and root accepts none of the passwords the agent
// has: the Secret's, the empty one of a fresh FE, and for an instance
// restored from a cluster snapshot the source's.
const ReasonRootPasswordRefused = "RootPasswordRefused"

// MembershipStatus is the cluster membership as seen by the agent whose FE is
// the leader (the one that changes it). Other agents leave it out.
type MembershipStatus struct {
	// Leader is the host of the FE leader.
	Leader string `json:"leader,omitempty"`
	// Frontends and Backends are the hosts StarRocks lists, alive or not.
	Frontends []string `json:"frontends,omitempty"`
	Backends  []string `json:"backends,omitempty"`
	// Draining are BEs no longer desired that are decommissioned but still
	// hold tablets: their pods must keep running until they are gone from
	// Backends, so the hooks must not lower the BE replicas past them yet.
	Draining []BackendDrain `json:"draining,omitempty"`
	// Replication is how many replicas the tables keep; nil when it could
	// not be read.
	Replication *ReplicationReport `json:"replication,omitempty"`
	// DecommissionRefused is StarRocks' error for the last ALTER SYSTEM
	// DECOMMISSION BACKEND it refused (e.g. a table needs more replicas than
	// the BEs left); empty when the last one went through.
	DecommissionRefused string `json:"decommissionRefused,omitempty"`
	// Nodes are every FE and BE StarRocks lists with its state and
	// version (columns Alive and Version of SHOW FRONTENDS and SHOW
	// BACKENDS): the hooks restart the next pod of a rollout only once
	// the previous one is alive again on the version the module ships.
	Nodes []NodeStatus `json:"nodes,omitempty"`
	// ImageCreated is the Config.CreateImage token this leader ran ALTER
	// SYSTEM CREATE IMAGE for.
	ImageCreated string `json:"imageCreated,omitempty"`
	// ImageBaseline is the newest image of this FE (Status.ImageJournalID)
	// when it ran ALTER SYSTEM CREATE IMAGE for ImageCreated, and
	// ImageRequestedAt when (RFC 3339): the statement only asks for an
	// image, the hooks wait until one newer than the baseline is on
	// every FE.
	ImageBaseline    int64  `json:"imageBaseline,omitempty"`
	ImageRequestedAt string `json:"imageRequestedAt,omitempty"`
	// Tablets is the tablet health StarRocks reports; the hooks restart
	// the next BE of a rollout only when no tablet is unhealthy.
	Tablets *TabletsStatus `json:"tablets,omitempty"`
	// ComputeNodes are the CNs of a shared-data instance (nil otherwise).
	ComputeNodes *ComputeNodesStatus `json:"computeNodes,omitempty"`
}

// TabletsStatus is the Total row of SHOW PROC '/statistic'.
type TabletsStatus struct {
	// Unhealthy is column UnhealthyTabletNum; -1 when it could not be read.
	Unhealthy int64 `json:"unhealthy"`
	// Since is when the agent first saw Unhealthy non-zero without a zero
	// in between (RFC 3339; empty while it is 0).
	Since string `json:"since,omitempty"`
	// NotRead: the agent was not asked to read it (Config.TabletHealth
	// unset); Unhealthy means nothing then.
	NotRead bool `json:"notRead,omitempty"`
}

// ReplicationReport is the largest and the smallest replication number of
// any table partition (internal tables included) and a table with each, as
// "database.table"; the numbers are 0 when there is no table.
type ReplicationReport struct {
	MaxReplicationNum   int32  `json:"maxReplicationNum"`
	MaxReplicationTable string `json:"maxReplicationTable,omitempty"`
	MinReplicationNum   int32  `json:"minReplicationNum"`
	MinReplicationTable string `json:"minReplicationTable,omitempty"`
}

// NodeStatus is one FE or BE as StarRocks lists it.
type NodeStatus struct {
	Host    string `json:"host"`
	Alive   bool   `json:"alive"`
	Version string `json:"version,omitempty"`
}

// Reasons of JoinStatus.
const (
	// JoinReasonRejoining: the FE's meta is empty on an instance that has
	// bootstrapped; the agent re-adds it to the existing leader and the FE
	// starts with that leader as its helper.
	JoinReasonRejoining = "FrontendRejoining"
	// JoinReasonWaitingForLeader: the same, but no leader is reachable
	// (every FE lost or down): the FE waits instead of starting an empty
	// cluster of its own.
	JoinReasonWaitingForLeader = "WaitingForLeader"
)

// JoinStatus is what an FE with an empty meta directory waits for.
type JoinStatus struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Files the agent writes into the run directory it shares with the FE
// start wrapper (images/starrocks-fe/fe-start.sh). Exactly one of them
// tells a wrapper whose FE has no meta how to start.
const (
	// HelperFileName holds the leader's host:editLogPort: start with --helper.
	HelperFileName = "fe-helper"
	// BootstrapFileName exists only while the instance has never
	// bootstrapped and this is the first FE: start a new cluster.
	BootstrapFileName = "fe-bootstrap"
	// RestoredFileName tells the first FE of an instance restored from a
	// cluster snapshot, whose meta still has the wrapper's restore marker
	// (RestoreMarkerName), that the instance has bootstrapped since: the
	// restore finished, start from the meta.
	RestoredFileName = "cluster-snapshot-restored"
	// RestoreMarkerName is the file the wrapper leaves in the FE's meta
	// before it starts a restore from a cluster snapshot.
	RestoreMarkerName = "cluster-snapshot-restore"
	// RootResetFileName asks the wrapper of the first FE of a restored
	// instance, whose root accepts no password the agent has, to restore
	// again with StarRocks' enable_auth_check = false so that the agent
	// can give root its password.
	RootResetFileName = "root-password-reset"
	// RootResetDoneFileName tells that wrapper that root has the agent's
	// password and StarRocks has finished the restore: start from the meta
	// with authentication on.
	RootResetDoneFileName = "root-password-reset-done"
)

// BackendDrain is the progress of one decommissioned BE.
type BackendDrain struct {
	Host      string `json:"host"`
	TabletNum int64  `json:"tabletNum"`
}

// UsersStatus is how far the declared databases, roles and users are
// applied. Never contains a password.
type UsersStatus struct {
	// Ready: every declared database, role and user is as declared.
	Ready bool `json:"ready"`
	// Applied is GrantsToken of the Config.Grants this report is about:
	// the hooks trust Ready only for the declaration in effect.
	Applied string `json:"applied,omitempty"`
	// Reason is a CamelCase word when not ready.
	Reason string `json:"reason,omitempty"`
	// Message says what is pending or refused, for a person.
	Message string `json:"message,omitempty"`
	// Users are the declared users, in declaration order.
	Users []UserState `json:"users,omitempty"`
	// Databases are the declared ones and the others StarRocks lists
	// (system databases left out).
	Databases []DatabaseState `json:"databases,omitempty"`
}

// UserState is one declared user.
type UserState struct {
	Name    string `json:"name"`
	Ready   bool   `json:"ready"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// DatabaseState is one database.
type DatabaseState struct {
	Name    string `json:"name"`
	Managed bool   `json:"managed"`
	Exists  bool   `json:"exists"`
}

// GrantsToken identifies a declaration: the first 16 hex digits of the
// SHA-256 of its JSON ("" for nil). The agent reports it with the status of
// what it applied; the hooks compare it with the declaration in effect.
func GrantsToken(g *Grants) string {
	if g == nil {
		return ""
	}
	data, err := json.Marshal(g)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// RoleCycle returns "a -> b -> a" for the first inheritance cycle among
// roles (each inherits its Roles), or "": StarRocks refuses a cycle. A role
// that inherits itself is left to the caller, which reports it on its own.
// The class rules (admission) and the agent's planner both use it.
func RoleCycle(roles []GrantsRole) string {
	inherits := map[string][]string{}
	for _, r := range roles {
		inherits[r.Name] = r.Roles
	}
	state := map[string]int{} // 1 visiting, 2 done
	var path []string
	var visit func(string) string
	visit = func(n string) string {
		switch state[n] {
		case 1:
			// Only the cycle itself, from where it starts.
			start := slices.Index(path, n)
			return strings.Join(append(slices.Clone(path[start:]), n), " -> ")
		case 2:
			return ""
		}
		state[n] = 1
		path = append(path, n)
		for _, in := range inherits[n] {
			if in == n {
				continue
			}
			if c := visit(in); c != "" {
				return c
			}
		}
		path = path[:len(path)-1]
		state[n] = 2
		return ""
	}
	for _, r := range roles {
		if c := visit(r.Name); c != "" {
			return c
		}
	}
	return ""
}
