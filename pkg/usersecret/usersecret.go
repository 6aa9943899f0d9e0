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

// Package usersecret is the content of a declared user's connection Secret
// (the keys of agentconfig.UserSecret*Key): the agent writes it, and the
// client recipes of docs/USAGE.md are tested against it (test/clients), so
// what the docs promise and what the agent writes cannot drift apart.
package usersecret

import (
	"net"
	"strconv"

	"github.com/go-sql-driver/mysql"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// Data is the content of a user's connection Secret for the client Service
// queryHost:queryPort; dsnOK is false when the password does not survive
// go-sql-driver's ParseDSN, and then there is no dsn key.
func Data(queryHost string, queryPort int, user, password string, ca []byte) (data map[string][]byte, dsnOK bool) {
	hostPort := net.JoinHostPort(queryHost, strconv.Itoa(queryPort))
	data = map[string][]byte{
		agentconfig.UserSecretUsernameKey: []byte(user),
		agentconfig.UserSecretPasswordKey: []byte(password),
		agentconfig.UserSecretHostKey:     []byte(queryHost),
		agentconfig.UserSecretPortKey:     []byte(strconv.Itoa(queryPort)),
		agentconfig.UserSecretCAKey:       ca,
		// MySQL Connector/J: sslMode=VERIFY_IDENTITY checks the chain
		// and the host name (the client trusts ca.crt).
		agentconfig.UserSecretJDBCKey: []byte("jdbc:mysql://" + hostPort + "/?sslMode=VERIFY_IDENTITY"),
	}
	dsn, ok := DSN(user, password, hostPort)
	if ok {
		data[agentconfig.UserSecretDSNKey] = []byte(dsn)
	}
	return data, ok
}

// DSN writes user:password@tcp(host:port)/?tls=starrocks and checks that
// go-sql-driver reads user, password and address back unchanged. The part
// before the last / is checked alone: ParseDSN would refuse tls=starrocks
// until the client registers that TLS configuration, and the parameters
// after the last / cannot change how the part before it is read.
func DSN(user, password, hostPort string) (string, bool) {
	base := user + ":" + password + "@tcp(" + hostPort + ")/"
	c, err := mysql.ParseDSN(base)
	if err != nil || c.User != user || c.Passwd != password || c.Net != "tcp" || c.Addr != hostPort || c.DBName != "" {
		return "", false
	}
	return base + "?tls=starrocks", true
}
