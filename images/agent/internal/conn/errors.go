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
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Kind is the class of a failure, used as the metrics label and to decide
// whether retrying can help.
type Kind string

const (
	// KindTLS is a TLS misconfiguration: the server refused plaintext, the
	// chain or the server name does not verify, the handshake failed. Retrying
	// does not help until someone fixes the certificates or the settings.
	KindTLS Kind = "tls"
	// KindAuth is a rejected user or password over a working TLS connection.
	KindAuth Kind = "auth"
	// KindConnection is a network failure: refused, timed out, reset.
	KindConnection Kind = "connection"
	// KindQuery is an error the server returned for a statement.
	KindQuery Kind = "query"
)

// MySQL and StarRocks error numbers the classification relies on.
const (
	erAccessDenied = 1045
	// MySQL ER_SECURE_TRANSPORT_REQUIRED.
	erSecureTransportMySQL = 3159
	// MariaDB ER_SECURE_TRANSPORT_REQUIRED.
	erSecureTransportMariaDB = 4036
	// StarRocks FE with ssl_force_secure_transport=true.
	erSecureTransportStarRocks = 5205
)

// Error is a classified failure of one operation.
type Error struct {
	Kind Kind
	// Op says what was being done, e.g. "connect to fe.example:9030".
	Op  string
	Err error
}

func (e *Error) Error() string {
	if e.Kind == KindTLS {
		return fmt.Sprintf("%s: TLS misconfiguration: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether trying again later may succeed without a change
// of configuration.
func (e *Error) Retryable() bool { return e.Kind == KindConnection }

// KindOf returns the kind of a classified error, or "" for other errors.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Classify names the kind of err. usedTLS says whether the failed connection
// was configured for TLS: a server that only accepts TLS accounts may answer
// a plaintext client "access denied" (1045) instead of a transport error, and
// that is a TLS misconfiguration, not a wrong password. fallback is returned
// for errors that carry no better hint.
func Classify(err error, usedTLS bool, fallback Kind) Kind {
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch {
		case myErr.Number == erSecureTransportMySQL,
			myErr.Number == erSecureTransportMariaDB,
			myErr.Number == erSecureTransportStarRocks,
			strings.Contains(strings.ToLower(myErr.Message), "insecure transport"),
			strings.Contains(strings.ToLower(myErr.Message), "secure transport"):
			return KindTLS
		case myErr.Number == erAccessDenied && !usedTLS:
			return KindTLS
		case myErr.Number == erAccessDenied:
			return KindAuth
		}
		return KindQuery
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
		record           tls.RecordHeaderError
		alert            tls.AlertError
	)
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &verify), errors.As(err, &record), errors.As(err, &alert),
		errors.Is(err, mysql.ErrNoTLS):
		return KindTLS
	}
	if strings.Contains(err.Error(), "tls: ") {
		return KindTLS
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return KindConnection
	}
	return fallback
}
