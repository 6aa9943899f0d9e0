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

package fakefe_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/dev/realfe"
	"github.com/deckhouse/managed-starrocks/pkg/sqlrows"
)

// sameAnswers are statements both this package's server and the real FE
// answer, sent as the user named to both in this order (the earlier ones
// make the state the later ones read). Their answers must agree: the
// error's number and message, the columns the fake returns (each must be
// one of the real FE's: the fake leaves out columns no client reads, and
// orders them on purpose differently), the number of rows and the shape of
// each value (NULL, empty, a number, a time, other text).
var sameAnswers = []struct{ user, stmt string }{
	{"root", "SHOW FRONTENDS"},
	{"root", "SHOW BACKENDS"},
	{"root", "ADMIN SHOW FRONTEND CONFIG LIKE 'catalog_trash_expire_second'"},
	{"root", "ADMIN SHOW FRONTEND CONFIG LIKE 'no_such_config_key'"},
	{"root", `ADMIN SET FRONTEND CONFIG ("no_such_config_key" = "1")`},
	{"root", `ADMIN SET FRONTEND CONFIG ("catalog_trash_expire_second" = "3600")`},
	{"root", "SHOW DATABASES"},
	{"root", "SHOW ROLES"},
	{"root", "SHOW USERS"},
	{"root", "SELECT CURRENT_ROLE()"},
	{"root", "CREATE USER 'conf_u' IDENTIFIED BY 'conf-pass-1'"},
	{"root", "CREATE USER 'conf_u' IDENTIFIED BY 'conf-pass-1'"},
	{"root", "CREATE ROLE conf_r"},
	{"root", "CREATE ROLE conf_r"},
	{"root", "CREATE DATABASE conf_db"},
	{"root", "CREATE DATABASE conf_db"},
	{"root", "GRANT ALTER, DROP ON DATABASE conf_db TO ROLE conf_r"},
	{"root", "GRANT SELECT ON ALL TABLES IN DATABASE conf_db TO ROLE conf_r"},
	{"root", "GRANT conf_r TO USER 'conf_u'"},
	{"root", "GRANT SELECT ON ALL TABLES IN DATABASE cat_ext.cat_db TO ROLE conf_r"},
	{"root", "SHOW GRANTS FOR ROLE conf_r"},
	{"root", "SHOW GRANTS FOR 'conf_u'"},
	{"root", "SHOW GRANTS FOR ROLE no_such_role"},
	{"root", "SHOW GRANTS FOR 'no_such_user'"},
	{"root", "SHOW ROLES"},
	{"root", "SHOW DATABASES"},
	{"root", "ALTER USER IF EXISTS 'no_such_user' IDENTIFIED BY 'conf-pass-2'"},
	{"root", "ALTER USER 'no_such_user' IDENTIFIED BY 'conf-pass-2'"},
	{"root", "ALTER USER IF EXISTS 'conf_u' IDENTIFIED BY 'conf-pass-2'"},
	{"root", "GRANT no_such_role TO USER 'conf_u'"},
	{"root", "REVOKE db_admin FROM USER 'conf_u'"},
	{"root", "DROP ROLE no_such_role"},
	{"root", "DROP USER 'no_such_user'"},
	{"root", "DROP USER 'root'"},
	{"root", "SHOW SNAPSHOT ON no_such_repo"},
	{"root", "SHOW REPOSITORIES"},
	{"root", "SHOW PROC '/statistic'"},
	{"root", "SHOW COMPUTE NODES"},
	{"root", `ALTER SYSTEM ADD COMPUTE NODE "conf-cn-0.conf-cn.team-a.svc.cluster.local:9050"`},
	{"root", `ALTER SYSTEM ADD COMPUTE NODE "conf-cn-0.conf-cn.team-a.svc.cluster.local:9050"`},
	{"root", "SHOW COMPUTE NODES"},
	{"root", `ALTER SYSTEM DROP COMPUTE NODE "conf-cn-0.conf-cn.team-a.svc.cluster.local:9050"`},
	{"root", `ALTER SYSTEM DROP COMPUTE NODE "conf-cn-0.conf-cn.team-a.svc.cluster.local:9050"`},
	{"conf_u", `ALTER SYSTEM ADD COMPUTE NODE "conf-cn-1.conf-cn.team-a.svc.cluster.local:9050"`},
	{"conf_u", "SELECT CURRENT_ROLE()"},
	{"conf_u", "SHOW FRONTENDS"},
	{"conf_u", "ADMIN SHOW FRONTEND CONFIG LIKE 'catalog_trash_expire_second'"},
	{"conf_u", `ADMIN SET FRONTEND CONFIG ("catalog_trash_expire_second" = "3600")`},
	{"conf_u", "CREATE DATABASE conf_db2"},
	{"conf_u", "CREATE USER 'conf_u2' IDENTIFIED BY 'x'"},
	{"conf_u", "ALTER SYSTEM CREATE IMAGE"},
	{"root", "REVOKE conf_r FROM USER 'conf_u'"},
	{"root", "DROP ROLE conf_r"},
	{"root", "DROP USER 'conf_u'"},
}

// answer is what a server said to one statement, reduced to what the
// comparison keeps.
type answer struct {
	err    string
	cols   []string
	shapes [][]string
}

func ask(ctx context.Context, db *sql.DB, stmt string) answer {
	rows, err := db.QueryContext(ctx, stmt)
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return answer{err: fmt.Sprintf("%d %s", me.Number, me.Message)}
		}
		return answer{err: err.Error()}
	}
	defer rows.Close()
	a := answer{}
	a.cols, _ = rows.Columns()
	for rows.Next() {
		vals := make([]sql.RawBytes, len(a.cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return answer{err: err.Error()}
		}
		if statisticsRow(vals) {
			continue
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = shape(v)
		}
		a.shapes = append(a.shapes, row)
	}
	if err := rows.Err(); err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return answer{err: fmt.Sprintf("%d %s", me.Number, me.Message)}
		}
		return answer{err: err.Error()}
	}
	return a
}

var (
	numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	timeRE   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$`)
)

// statisticsRow says whether a row names the _statistics_ database: the
// FE creates it a while after it starts (fe-core
// statistic/StatisticsMetaManager.runAfterCatalogReady, after
// statistic_manager_sleep_time_sec, 60 s by default), the fake has it from
// the start, so whether both list it depends on the FE's age: the row is
// left out of both answers.
func statisticsRow(vals []sql.RawBytes) bool {
	for _, v := range vals {
		if string(v) == "_statistics_" {
			return true
		}
	}
	return false
}

func shape(v sql.RawBytes) string {
	switch s := string(v); {
	case v == nil:
		return "NULL"
	case s == "":
		return "empty"
	case numberRE.MatchString(s):
		return "number"
	case timeRE.MatchString(s):
		return "time"
	case s == "true" || s == "false":
		return "bool"
	default:
		return "text"
	}
}

// column returns the shapes of one column by name.
func (a answer) column(name string) []string {
	for i, c := range a.cols {
		if c == name {
			var out []string
			for _, r := range a.shapes {
				out = append(out, r[i])
			}
			return out
		}
	}
	return nil
}

func (a answer) String() string {
	if a.err != "" {
		return "error " + a.err
	}
	return fmt.Sprintf("columns %v rows %v", a.cols, a.shapes)
}

// TestAnswersAsTheRealFEDoes runs feBehaviour against a real FE of a new
// Standalone instance (dev/realfe) with a BE that never answers, then sends
// sameAnswers to it and to this package's server and compares the answers.
func TestAnswersAsTheRealFEDoes(t *testing.T) {
	c := realfe.Start(t, realfe.Options{RequireSecureTransport: true})
	fe := c.StartLeader(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mustExec(t, c.DB(t, fe, "root", "", false), fmt.Sprintf("SET PASSWORD = PASSWORD('%s')", rootPassword))
	real := func(user, password string) *sql.DB { return c.DB(t, fe, user, password, false) }
	// A BE that never answers its heartbeat: the FE's own name, where no
	// BE listens.
	mustExec(t, real("root", rootPassword), fmt.Sprintf(`ALTER SYSTEM ADD BACKEND "%s"`, net.JoinHostPort(fe.Host, "9050")))

	for _, tc := range feBehaviour {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, real) })
	}
	t.Run("SHOW GRANTS names an external catalog only in its Catalog column", func(t *testing.T) { catalogGrants(t, real) })

	// The BE's ErrMsg stays empty until its first heartbeat has failed
	// (fe-core system/HeartbeatMgr, every heartbeat_mgr_interval_second);
	// the fake's BEs that are down have failed theirs.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if a := ask(ctx, real("root", rootPassword), "SHOW BACKENDS"); len(a.column("ErrMsg")) == 1 && a.column("ErrMsg")[0] == "text" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the BE nothing listens for has no heartbeat error after a minute")
		}
	}

	s := startFake(t)
	s.SetFrontends(fakefe.Frontend{Host: fe.Host, EditLogPort: 9010, Role: "LEADER", Alive: true})
	s.AddBackendRow(fakefe.Backend{Host: fe.Host, HeartbeatPort: 9050, Alive: false})
	// fe-core common/Config.java: catalog_trash_expire_second = 86400,
	// mutable; the fake holds only the keys a test gives it.
	s.SetFEConfig("catalog_trash_expire_second", "86400", true)
	fake := fakeLogin(t, s)
	// The fake starts with the databases the cases above left on the FE.
	dbs, err := sqlrows.QueryMaps(ctx, real("root", rootPassword), "SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range dbs {
		if !contains(s.Databases(), m["Database"]) {
			mustExec(t, fake("root", rootPassword), "CREATE DATABASE `"+m["Database"]+"`")
		}
	}
	passwords := map[string]string{"root": rootPassword, "conf_u": "conf-pass-1"}
	realDB, fakeDB := map[string]*sql.DB{}, map[string]*sql.DB{}
	for _, q := range sameAnswers {
		if realDB[q.user] == nil {
			realDB[q.user], fakeDB[q.user] = real(q.user, passwords[q.user]), fake(q.user, passwords[q.user])
		}
		r, f := ask(ctx, realDB[q.user], q.stmt), ask(ctx, fakeDB[q.user], q.stmt)
		if diff := compare(r, f); diff != "" {
			t.Errorf("%s as %s: %s\n  real FE: %s\n  fake:    %s", q.stmt, q.user, diff, r, f)
		}
	}

	// A plaintext client from another address than 127.0.0.1, which both
	// exempt from ssl_force_secure_transport: the fake listens on the
	// host's address on the FEs' segment, the test's connections come
	// from it.
	forced := fakefe.Start(t, fakefe.Options{RootPassword: rootPassword, ForceSecureTransport: true,
		ListenAddr: net.JoinHostPort(c.HostIP.String(), "0")})
	r := ask(ctx, c.DB(t, fe, "root", rootPassword, true), "SELECT 1")
	f := ask(ctx, fakeLogin(t, forced)("root", rootPassword), "SELECT 1")
	if r.err != f.err || !strings.HasPrefix(r.err, "5205 ") {
		t.Errorf("a plaintext client: the real FE says %s, the fake %s", r, f)
	}
}

func compare(r, f answer) string {
	if r.err != "" || f.err != "" {
		// The fake's parser is not StarRocks' ANTLR grammar: a syntax
		// error is one for both, its position and hint are not compared.
		const syntax = "1064 Getting syntax error"
		if strings.HasPrefix(r.err, syntax) && strings.HasPrefix(f.err, syntax) {
			return ""
		}
		if r.err != f.err {
			return "the errors differ"
		}
		return ""
	}
	var missing []string
	for _, col := range f.cols {
		if r.column(col) == nil && len(r.shapes) > 0 || !contains(r.cols, col) {
			missing = append(missing, col)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "the real FE has no column " + strings.Join(missing, ", ")
	}
	if len(r.shapes) != len(f.shapes) {
		return "the numbers of rows differ: " + strconv.Itoa(len(r.shapes)) + " and " + strconv.Itoa(len(f.shapes))
	}
	for _, col := range f.cols {
		rs, fs := r.column(col), f.column(col)
		sort.Strings(rs)
		sort.Strings(fs)
		if strings.Join(rs, ",") != strings.Join(fs, ",") {
			return fmt.Sprintf("column %s: values shaped %v and %v", col, rs, fs)
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func startFake(t *testing.T) *fakefe.Server {
	return fakefe.Start(t, fakefe.Options{RootPassword: rootPassword})
}

func fakeLogin(t *testing.T, s *fakefe.Server) func(user, password string) *sql.DB {
	return func(user, password string) *sql.DB {
		db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/", user, password, s.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}
