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

package conn

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		usedTLS bool
		want    Kind
	}{
		{"MySQL 3159 insecure transport is TLS", &mysql.MySQLError{Number: 3159, Message: "Connections using insecure transport are prohibited"}, true, KindTLS},
		{"MariaDB 4036 secure transport required is TLS", &mysql.MySQLError{Number: 4036, Message: "--require-secure-transport"}, true, KindTLS},
		{"StarRocks 5205 is TLS", &mysql.MySQLError{Number: 5205, Message: "ssl_force_secure_transport"}, true, KindTLS},
		{"an unknown number mentioning insecure transport is TLS", &mysql.MySQLError{Number: 1, Message: "insecure transport"}, true, KindTLS},
		{"access denied to a plaintext client is TLS", &mysql.MySQLError{Number: 1045}, false, KindTLS},
		{"access denied over TLS is auth", &mysql.MySQLError{Number: 1045}, true, KindAuth},
		{"another server error is a query error", &mysql.MySQLError{Number: 1064}, true, KindQuery},
		{"unknown authority is TLS", fmt.Errorf("dial: %w", x509.UnknownAuthorityError{}), true, KindTLS},
		{"hostname mismatch is TLS", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "x"}, true, KindTLS},
		{"server without TLS is TLS", mysql.ErrNoTLS, true, KindTLS},
		{"connection refused is connection", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true, KindConnection},
		{"unexpected EOF is connection", io.ErrUnexpectedEOF, true, KindConnection},
		{"anything else gets the fallback", errors.New("boom"), true, KindQuery},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Classify(tc.err, tc.usedTLS, KindQuery))
		})
	}
}
