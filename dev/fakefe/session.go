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

package fakefe

import (
	"regexp"
	"strings"

	"vitess.io/vitess/go/mysql/sqlerror"
	"vitess.io/vitess/go/sqltypes"
)

// The statements ordinary clients send on their own when they connect
// (MySQL Connector/J reads a list of session variables, PyMySQL sets
// autocommit, the mysql client asks for its version comment and selects the
// database named on its command line). StarRocks answers all of them; the
// client recipes of docs/USAGE.md (test/clients) need them answered to
// connect at all.
var (
	// An optional leading comment: Connector/J names itself in one.
	reSelectVars = regexp.MustCompile(`(?is)^(?:/\*.*?\*/\s*)?select\s+(@@.+?)(?:\s+limit\s+1)?$`)
	reSelectVar  = regexp.MustCompile(`(?i)^@@(?:session\.|global\.|local\.)?([a-z_]+)(?:\s+as\s+([a-z_]+))?$`)
	reSetNames   = regexp.MustCompile(`(?is)^(?:/\*.*?\*/\s*)?set\s+names\s+\w+(?:\s+collate\s+\w+)?$`)
	reSetSession = regexp.MustCompile(`(?is)^(?:/\*.*?\*/\s*)?set\s+(?:session\s+|@@session\.)?([a-z_]+)\s*=\s*[^;]+$`)
	reUse        = regexp.MustCompile("(?i)^use\\s+`?([A-Za-z0-9_]+)`?$")
)

// sessionVariables are the values StarRocks reports for the variables
// clients read at connect time: fe-core qe/GlobalVariable.java (version_comment
// "StarRocks version <version>", license, lower_case_table_names,
// init_connect, system_time_zone, query_cache_size, performance_schema) and
// qe/SessionVariable.java (the others, at their defaults; sql_mode 32 is
// ONLY_FULL_GROUP_BY).
var sessionVariables = map[string]string{
	"auto_increment_increment": "1",
	"autocommit":               "1",
	"character_set_client":     "utf8",
	"character_set_connection": "utf8",
	"character_set_results":    "utf8",
	"character_set_server":     "utf8",
	"collation_connection":     "utf8_general_ci",
	"collation_server":         "utf8_general_ci",
	"init_connect":             "",
	"interactive_timeout":      "3600",
	"license":                  "Apache License 2.0",
	"lower_case_table_names":   "0",
	"max_allowed_packet":       "33554432",
	"net_buffer_length":        "16384",
	"net_write_timeout":        "60",
	"performance_schema":       "0",
	"query_cache_size":         "1048576",
	"query_cache_type":         "0",
	"sql_mode":                 "ONLY_FULL_GROUP_BY",
	"system_time_zone":         "UTC",
	"time_zone":                "UTC",
	"transaction_isolation":    "REPEATABLE-READ",
	"tx_isolation":             "REPEATABLE-READ",
	"tx_read_only":             "0",
	"transaction_read_only":    "0",
	"version_comment":          "StarRocks version 4.1",
	"wait_timeout":             "28800",
}

// execSession answers the connect-time statements; handled is false for
// others.
func execSession(q string) (*sqltypes.Result, bool, error) {
	if reSetNames.MatchString(q) {
		return &sqltypes.Result{}, true, nil
	}
	// Only the session variables StarRocks has: any other SET (a
	// malformed SET PASSWORD, say) stays an error, as it is for StarRocks.
	if m := reSetSession.FindStringSubmatch(q); m != nil {
		if _, known := sessionVariables[strings.ToLower(m[1])]; known {
			return &sqltypes.Result{}, true, nil
		}
	}
	if reUse.MatchString(q) {
		return &sqltypes.Result{}, true, nil
	}
	m := reSelectVars.FindStringSubmatch(q)
	if m == nil {
		return nil, false, nil
	}
	var names, values []string
	for _, item := range strings.Split(m[1], ",") {
		v := reSelectVar.FindStringSubmatch(strings.TrimSpace(item))
		if v == nil {
			return nil, false, nil
		}
		value, known := sessionVariables[strings.ToLower(v[1])]
		if !known {
			return nil, true, sqlerror.NewSQLErrorf(sqlerror.ERUnknownSystemVariable, "HY000", "Unknown system variable '%s'", v[1])
		}
		name := v[2]
		if name == "" {
			name = strings.TrimSpace(item)
		}
		names, values = append(names, name), append(values, value)
	}
	return &sqltypes.Result{Fields: fields(names...), Rows: [][]sqltypes.Value{row(values...)}}, true, nil
}
