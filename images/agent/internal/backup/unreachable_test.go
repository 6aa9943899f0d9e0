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

package backup_test

import (
	"context"
	"database/sql"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/dev/fakefe"
	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
)

// closedEndpoint is an http:// endpoint nothing listens on.
func closedEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// CREATE REPOSITORY against an endpoint that does not answer keeps the
// statement for as long as StarRocks' S3 retries last (about a minute:
// fe-core AwsCloudConfiguration, Repository.initRepository), past the
// agent's read timeout; the FE goes on running it after the client gave
// up, and KILL does not stop a DDL waiting on S3. The agent checks from
// its pod, which is the leader FE's pod and network, that the endpoint
// answers at all before it sends the statement.
func TestRepositoryEndpointThatDoesNotAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint func(t *testing.T) string
		readOnly bool
	}{
		{name: "nothing listens on the endpoint", endpoint: closedEndpoint},
		{name: "nothing listens on the endpoint of a restore's repository", endpoint: closedEndpoint, readOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := fakefe.Start(t, fakefe.Options{RootPassword: rootPass})
			fe.SetUnreachableS3Time(20 * time.Second)
			cfg := mysql.NewConfig()
			cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPass, "tcp", fe.Addr()
			c, err := mysql.NewConnector(cfg)
			if err != nil {
				t.Fatal(err)
			}
			db := sql.OpenDB(c)
			t.Cleanup(func() { db.Close() })
			keys := backup.Keys{AccessKey: "AKIAEXAMPLEKEY", SecretKey: "secretEXAMPLEkey123"}
			r := backup.Repository{Name: "d8_managed", ReadOnly: tc.readOnly, Keys: keys,
				Storage: backup.Storage{Endpoint: tc.endpoint(t), Region: "us-east-1", Bucket: bucket, Prefix: prefix, PathStyle: true}}

			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			start := time.Now()
			_, err = backup.EnsureRepository(ctx, db, r, "")
			took := time.Since(start)
			if err == nil {
				t.Fatal("a repository at an endpoint that does not answer was created")
			}
			noKeys(t, keys, err.Error())
			for _, s := range fe.Statements() {
				if strings.Contains(strings.ToUpper(s), "CREATE") {
					t.Fatalf("CREATE REPOSITORY was sent although the endpoint does not answer (%s): %v", took, err)
				}
			}
			if !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), "127.0.0.1") {
				t.Fatalf("the error does not say the endpoint does not answer: %v", err)
			}
			if took > 15*time.Second {
				t.Fatalf("took %s", took)
			}
		})
	}
}
