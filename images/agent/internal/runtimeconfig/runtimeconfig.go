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

// Package runtimeconfig compares runtime-mutable FE and BE configuration
// with the desired values and applies the differences. Runtime changes are
// not persisted by StarRocks, so a pass runs after every (re)connect; keys
// that need a restart belong in fe.conf/be.conf and the rolling restart.
package runtimeconfig

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Querier is what the package needs from a pool.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Result of a pass.
type Result struct {
	// Applied are the changed keys as key=value, prefixed fe. or be.
	Applied []string
	// Pending are the keys not compared for want of a live BE, as be.key.
	Pending []string
}

// PendingMessage is why Result.Pending waits, for the status.
const PendingMessage = "no BE is alive: BE configuration is read from information_schema.be_configs, which a BE serves; applied once a BE is up"

// BackendPending lists every key of desired as pending (the caller saw no
// BE alive and sent nothing).
func BackendPending(desired map[string]string) Result {
	var res Result
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		res.Pending = append(res.Pending, "be."+name)
	}
	return res
}

// NoBackendAlive: StarRocks refused a statement that needs a live BE. A
// scan of information_schema.be_configs (and its UPDATE, a SchemaTableSink
// on a BE) is scheduled on a BE; with none alive fe-core's scheduler
// reports FeConstants.BACKEND_NODE_NOT_FOUND_ERROR
// (qe/scheduler/DefaultWorkerProvider.reportWorkerNotFoundException)
// without an ErrorCode, so the packet carries MysqlErrPacket's default
// 1064; the text is what tells it from a syntax error.
func NoBackendAlive(err error) bool {
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr) && myErr.Number == 1064 &&
		strings.HasPrefix(myErr.Message, "Backend node not found")
}

// ApplyFrontend makes the connected FE hold desired. ADMIN SET FRONTEND
// CONFIG sets the value on the FE that runs it and forwards it to every
// other FE (fe-core common/ConfigBase.setConfig); an FE it cannot reach
// (one restarting) makes the statement fail with ERROR_SET_CONFIG_FAILED
// although the connected FE took the value. That failure is not this
// FE's: each agent applies to its own FE, and a restarted FE reads the
// rendered fe.conf. So after 5101 the key is read back, and a value that
// arrived counts as applied.
func ApplyFrontend(ctx context.Context, q Querier, desired map[string]string) (Result, error) {
	var res Result
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(desired)) {
		want := desired[key]
		value, mutable, found, err := showFrontendConfig(ctx, q, key)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("read fe %s: %w", key, err))
			continue
		case !found:
			errs = append(errs, fmt.Errorf("fe %s: no such configuration key", key))
			continue
		case value == want:
			continue
		case !mutable:
			errs = append(errs, fmt.Errorf("fe %s is %q, wants %q: not runtime-mutable, needs an FE restart", key, value, want))
			continue
		}
		stmt := fmt.Sprintf("ADMIN SET FRONTEND CONFIG (%s = %s)", quoteDouble(key), quoteDouble(want))
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			if !forwardFailed(err) {
				errs = append(errs, fmt.Errorf("set fe %s: %w", key, err))
				continue
			}
			if now, _, _, rerr := showFrontendConfig(ctx, q, key); rerr != nil || now != want {
				errs = append(errs, fmt.Errorf("set fe %s: %w", key, err))
				continue
			}
		}
		res.Applied = append(res.Applied, "fe."+key+"="+want)
	}
	return res, errors.Join(errs...)
}

// errSetConfigFailed is fe-core common/ErrorCode ERROR_SET_CONFIG_FAILED.
const errSetConfigFailed = 5101

// forwardFailed: ADMIN SET FRONTEND CONFIG could not reach another FE.
func forwardFailed(err error) bool {
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr) && myErr.Number == errSetConfigFailed
}

func showFrontendConfig(ctx context.Context, q Querier, key string) (value string, mutable, found bool, err error) {
	// LIKE treats "_" as a wildcard, so a few other keys may match too; the
	// rows are filtered by exact Key below rather than relying on escapes,
	// which FE versions handle differently.
	rows, err := q.QueryContext(ctx, "ADMIN SHOW FRONTEND CONFIG LIKE ?", key)
	if err != nil {
		return "", false, false, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", false, false, err
	}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", false, false, err
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = vals[i].String
		}
		if m["Key"] == key || slices.Contains(aliasNames(m["AliasNames"]), key) {
			return m["Value"], strings.EqualFold(m["IsMutable"], "true"), true, rows.Err()
		}
	}
	return "", false, false, rows.Err()
}

// aliasNames reads column AliasNames of ADMIN SHOW FRONTEND CONFIG, the
// old names of a key as Java's Arrays.toString prints them ("[a, b]", "[]"
// for none). A key renamed in StarRocks keeps its old name as an alias:
// LIKE matches the alias, the row is listed under the new name (fe-core
// common/ConfigBase.getConfigInfo), and ADMIN SET FRONTEND CONFIG takes
// either (ConfigBase.allMutableConfigs holds both).
func aliasNames(col string) []string {
	col = strings.TrimSuffix(strings.TrimPrefix(col, "["), "]")
	if col == "" {
		return nil
	}
	return strings.Split(col, ", ")
}

// ApplyBackend makes every BE hold desired through information_schema,
// which the FE fans out to all alive BEs. A key StarRocks cannot read for
// want of a live BE is pending, not an error: a new instance has no BE
// until its first joins, and a BE that restarts reads the rendered be.conf.
func ApplyBackend(ctx context.Context, q Querier, desired map[string]string) (Result, error) {
	var res Result
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		want := desired[name]
		differs, seen, err := backendDiffers(ctx, q, name, want)
		switch {
		case NoBackendAlive(err):
			// The last BE went down since SHOW BACKENDS: wait for one.
			res.Pending = append(res.Pending, "be."+name)
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("read be %s: %w", name, err))
			continue
		case !seen:
			// No BE reports the key yet (no BE joined, or an unknown key):
			// nothing to compare against, try again next pass.
			errs = append(errs, fmt.Errorf("be %s: no backend reports this key", name))
			continue
		case !differs:
			continue
		}
		if _, err := q.ExecContext(ctx, "UPDATE information_schema.be_configs SET VALUE = ? WHERE NAME = ?", want, name); err != nil {
			if NoBackendAlive(err) {
				res.Pending = append(res.Pending, "be."+name)
				continue
			}
			errs = append(errs, fmt.Errorf("set be %s: %w", name, err))
			continue
		}
		res.Applied = append(res.Applied, "be."+name+"="+want)
	}
	return res, errors.Join(errs...)
}

func backendDiffers(ctx context.Context, q Querier, name, want string) (differs, seen bool, err error) {
	rows, err := q.QueryContext(ctx, "SELECT BE_ID, NAME, VALUE FROM information_schema.be_configs WHERE NAME = ?", name)
	if err != nil {
		return false, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, n string
		var v sql.NullString
		if err := rows.Scan(&id, &n, &v); err != nil {
			return false, false, err
		}
		seen = true
		if v.String != want {
			differs = true
		}
	}
	return differs, seen, rows.Err()
}

func quoteDouble(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
