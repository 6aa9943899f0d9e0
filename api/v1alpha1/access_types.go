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

package v1alpha1

// Databases, roles and users an instance declares (spec.databases,
// spec.roles, spec.users), what the module reports about them
// (status.databases, status.users) and what a class allows
// (StarrocksClass spec.accounts). The agent of the FE leader applies them
// with the statements of StarRocks' privilege system (images/agent/
// internal/grants).

// A database of the instance. The module creates it if missing and never
// drops it: removing it from the list only stops managing it, its data
// stays.
// +kubebuilder:validation:XValidation:rule="!(self.name in ['information_schema', 'sys'])",message="name: information_schema and sys are StarRocks system databases, reserved"
type Database struct {
	// Name of the database: a lower-case letter, then up to 63 lower-case
	// letters, digits or '_'. Not on or to (words of the GRANT statement),
	// nor a StarRocks system database (information_schema, sys).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]{0,63}$`
	Name string `json:"name"`
}

// A role: privileges on declared databases, and the roles it inherits.
type Role struct {
	// Name of the role: a lower-case letter, then up to 63 lower-case
	// letters, digits or '_'. Not a built-in role's name (root,
	// cluster_admin, db_admin, user_admin, public, security_admin), the
	// module's d8ms_managed, on or to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]{0,63}$`
	Name string `json:"name"`

	// Roles this role inherits: other roles of spec.roles or the built-in
	// roles db_admin, user_admin and public.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:Pattern=`^[a-z][a-z0-9_]{0,63}$`
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`

	// Privileges of the role on declared databases.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Privileges []Privilege `json:"privileges,omitempty"`
}

// PrivilegeObject is what privileges are granted on. StarRocks keeps views
// and materialized views apart from tables (fe-core authorization/
// ObjectType.java VIEW, MATERIALIZED_VIEW): SELECT ON ALL TABLES does not
// reach them.
// +kubebuilder:validation:Enum=Database;AllTables;AllViews;AllMaterializedViews
type PrivilegeObject string

const (
	// OnDatabase: GRANT ... ON DATABASE db.
	OnDatabase PrivilegeObject = "Database"
	// OnAllTables: GRANT ... ON ALL TABLES IN DATABASE db (tables created
	// later included).
	OnAllTables PrivilegeObject = "AllTables"
	// OnAllViews: GRANT ... ON ALL VIEWS IN DATABASE db (views created
	// later included).
	OnAllViews PrivilegeObject = "AllViews"
	// OnAllMaterializedViews: GRANT ... ON ALL MATERIALIZED VIEWS IN
	// DATABASE db (materialized views created later included).
	OnAllMaterializedViews PrivilegeObject = "AllMaterializedViews"
)

// Which privileges fit which object: StarRocks fe-core
// authorization/DefaultAuthorizationProvider.java; the class rules'
// Privileges hold the same lists.

// Privileges on one database or on all its tables, views or materialized
// views, as StarRocks' GRANT statement names them.
// +kubebuilder:validation:XValidation:rule="self.object != 'Database' || self.privileges.all(p, p in ['ALTER', 'DROP', 'CREATE TABLE', 'CREATE VIEW', 'CREATE FUNCTION', 'CREATE MATERIALIZED VIEW'])",message="privileges on a Database must be among ALTER, DROP, CREATE TABLE, CREATE VIEW, CREATE FUNCTION, CREATE MATERIALIZED VIEW"
// +kubebuilder:validation:XValidation:rule="self.object != 'AllTables' || self.privileges.all(p, p in ['ALTER', 'DROP', 'SELECT', 'INSERT', 'EXPORT', 'UPDATE', 'DELETE'])",message="privileges on AllTables must be among ALTER, DROP, SELECT, INSERT, EXPORT, UPDATE, DELETE"
// +kubebuilder:validation:XValidation:rule="self.object != 'AllViews' || self.privileges.all(p, p in ['SELECT', 'ALTER', 'DROP'])",message="privileges on AllViews must be among SELECT, ALTER, DROP"
// +kubebuilder:validation:XValidation:rule="self.object != 'AllMaterializedViews' || self.privileges.all(p, p in ['SELECT', 'ALTER', 'REFRESH', 'DROP'])",message="privileges on AllMaterializedViews must be among SELECT, ALTER, REFRESH, DROP"
// +kubebuilder:validation:XValidation:rule="!(self.database in ['information_schema', 'sys'])",message="database: information_schema and sys are StarRocks system databases, reserved"
type Privilege struct {
	// Database the privileges are on: one of spec.databases, never a
	// StarRocks system database (information_schema, sys).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]{0,63}$`
	Database string `json:"database"`

	// Database: privileges on the database itself (CREATE TABLE ...).
	// AllTables: privileges on every table of the database, present and
	// future (SELECT, INSERT ...). AllViews and AllMaterializedViews: the
	// same for its views and materialized views, which AllTables does not
	// cover.
	Object PrivilegeObject `json:"object"`

	// The privileges, upper case as in StarRocks' GRANT: for a Database
	// ALTER, DROP, CREATE TABLE, CREATE VIEW, CREATE FUNCTION, CREATE
	// MATERIALIZED VIEW; for AllTables ALTER, DROP, SELECT, INSERT, EXPORT,
	// UPDATE, DELETE; for AllViews SELECT, ALTER, DROP; for
	// AllMaterializedViews SELECT, ALTER, REFRESH, DROP.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:MaxLength=32
	// +kubebuilder:validation:items:Pattern=`^[A-Z][A-Z ]*[A-Z]$`
	// +listType=set
	Privileges []string `json:"privileges"`
}

// A user of the instance, with the roles it gets and the Secret of its
// password. The module writes a Secret d8ms-sr-<instance>-user.<name> with
// everything a client needs to connect.
type User struct {
	// Name of the user: a lower-case letter, then up to 63 lower-case
	// letters, digits or '_', not ending with '_'. Not root, admin, the
	// module's account d8_agent, on or to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z]([a-z0-9_]{0,62}[a-z0-9])?$`
	Name string `json:"name"`

	// Roles of the user: roles of spec.roles or the built-in roles
	// db_admin, user_admin and public. All are active at login.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:items:Pattern=`^[a-z][a-z0-9_]{0,63}$`
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`

	// A Secret of the instance's namespace that holds the user's
	// password (8 to 1024 bytes). A change of it is rolled out. Without
	// it the module generates a password.
	// +optional
	PasswordSecretRef *PasswordSecretRef `json:"passwordSecretRef,omitempty"`
}

// PasswordSecretRef names a key of a Secret in the instance's namespace.
type PasswordSecretRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Key of the password in the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:default=password
	// +optional
	Key string `json:"key,omitempty"`
}

// ClassAccounts limits what instances of a class declare in
// spec.databases, spec.roles and spec.users.
type ClassAccounts struct {
	// Most databases an instance may declare; default 64.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxDatabases *int32 `json:"maxDatabases,omitempty"`

	// Most roles an instance may declare; 0 forbids roles of its own
	// (users then get built-in roles only); default 64.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxRoles *int32 `json:"maxRoles,omitempty"`

	// Most users an instance may declare; default 64.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxUsers *int32 `json:"maxUsers,omitempty"`

	// Built-in roles that declared roles and users may not get.
	// +kubebuilder:validation:MaxItems=3
	// +kubebuilder:validation:items:Pattern=`^(db_admin|user_admin|public)$`
	// +listType=set
	// +optional
	ForbiddenBuiltinRoles []string `json:"forbiddenBuiltinRoles,omitempty"`
}

// One database as the agent of the FE leader last saw it.
type DatabaseStatus struct {
	// Name of the database.
	Name string `json:"name"`
	// Managed: declared in spec.databases. A database removed from the
	// spec stays in StarRocks with its data and is listed as not managed.
	Managed bool `json:"managed"`
	// Exists in StarRocks.
	Exists bool `json:"exists"`
}

// One declared user and whether it is applied.
type UserStatus struct {
	// Name of the user.
	Name string `json:"name"`
	// Secret with the user's connection details (username, password,
	// host, port, ca.crt, dsn, jdbc-url).
	SecretName string `json:"secretName"`
	// Ready: the user exists with its roles and its current password.
	Ready bool `json:"ready"`
	// Reason is a CamelCase word when not ready, e.g. PasswordSecretMissing.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says what is pending or refused, for a person.
	// +optional
	Message string `json:"message,omitempty"`
}
