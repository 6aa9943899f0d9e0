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

// Package sqlrows reads SQL results by column name, as the agent reads
// StarRocks' answers and the tests read the real FE's and the stand-in's.
package sqlrows

import (
	"context"
	"database/sql"
)

// Querier is what QueryMaps needs of a pool (*sql.DB) or a connection.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// QueryMaps runs a query and returns its rows by column name, NULL as "":
// StarRocks' SHOW statements add and reorder columns between versions, so
// they are read by name, never by position.
func QueryMaps(ctx context.Context, q Querier, query string, args ...any) ([]map[string]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]string, len(cols))
		for i, c := range cols {
			m[c] = vals[i].String
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
