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

package usersecret_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
	"github.com/deckhouse/managed-starrocks/pkg/usersecret"
)

func TestDSNCarriesEveryPasswordUnchanged(t *testing.T) {
	// The client registers the CA under this name (docs/USAGE.md).
	if err := mysql.RegisterTLSConfig("starrocks", &tls.Config{MinVersion: tls.VersionTLS12}); err != nil {
		t.Fatal(err)
	}
	const host = "d8ms-sr-analytics.team-a.svc.cluster.local"
	for _, password := range []string{
		"K7QW2ZP4MXN6RT3VB5YH8JC2DL",
		"p@ss/w:rd?tls=false&x=(y)@tcp(evil:1)/",
		"/leading", "trailing/", "a b\tc", `back\slash`, "ünïcödé",
	} {
		data, ok := usersecret.Data(host, 9030, "etl", password, []byte("ca"))
		if !ok {
			t.Errorf("password %q: no dsn key", password)
			continue
		}
		cfg, err := mysql.ParseDSN(string(data[agentconfig.UserSecretDSNKey]))
		switch {
		case err != nil:
			t.Errorf("password %q: ParseDSN: %v", password, err)
		case cfg.User != "etl" || cfg.Passwd != password || cfg.Addr != host+":9030" || cfg.TLSConfig != "starrocks" || cfg.DBName != "":
			t.Errorf("password %q: read back user %q password %q addr %q tls %q db %q", password, cfg.User, cfg.Passwd, cfg.Addr, cfg.TLSConfig, cfg.DBName)
		}
		if jdbc := string(data[agentconfig.UserSecretJDBCKey]); strings.Contains(jdbc, password) || jdbc != "jdbc:mysql://"+host+":9030/?sslMode=VERIFY_IDENTITY" {
			t.Errorf("password %q: jdbc-url %q", password, jdbc)
		}
	}
}
