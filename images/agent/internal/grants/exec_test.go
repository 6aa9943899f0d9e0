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

package grants

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// refusing answers every statement with a server error that quotes it,
// as a server may.
type refusing struct{ ran []string }

func (r *refusing) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, errors.New("not used")
}

func (r *refusing) ExecContext(_ context.Context, q string, _ ...any) (sql.Result, error) {
	r.ran = append(r.ran, q)
	return nil, &mysql.MySQLError{Number: 1064, SQLState: [5]byte{'4', '2', '0', '0', '0'}, Message: "Getting syntax error near " + q}
}

func TestApplyErrorsHideSecrets(t *testing.T) {
	stmts, err := Plan(model(), Observed{})
	require.NoError(t, err)
	var secret Statement
	for _, s := range stmts {
		if s.Secret {
			secret = s
		}
	}
	q := &refusing{}
	done, err := Apply(context.Background(), q, []Statement{secret})
	require.Equal(t, 0, done)
	require.Equal(t, []string{secret.SQL}, q.ran)
	require.EqualError(t, err, "CREATE USER `app` IDENTIFIED BY PASSWORD '<redacted>' DEFAULT ROLE `d8ms_managed`, `writer`: Error 1064 (42000): statement refused (message withheld)")
	var myErr *mysql.MySQLError
	require.ErrorAs(t, err, &myErr)
	require.Equal(t, uint16(1064), myErr.Number)

	// Other statements keep the server's message: it says what was refused.
	_, err = Apply(context.Background(), q, stmts[:1])
	require.ErrorContains(t, err, "Getting syntax error near CREATE DATABASE")
}
