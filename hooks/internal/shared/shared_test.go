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

package shared

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jqString runs a JqTypes function on s as shell-operator's gojq does.
func jqString(t *testing.T, fn, s string) string {
	t.Helper()
	var out struct{ S string }
	data, err := json.Marshal(map[string]string{"s": s})
	require.NoError(t, err)
	require.NoError(t, helpers.JQRunOnString(context.Background(), JqTypes+`{S: (.s | `+fn+`)}`, string(data), &out))
	return out.S
}

var samples = []string{"", "short", strings.Repeat("a", MaxKeptBytes), strings.Repeat("a", MaxKeptBytes+1), strings.Repeat("é", 100),
	strings.Repeat("a", 1024), strings.Repeat("a", 1025), strings.Repeat("é", 600), strings.Repeat("日", 400), strings.Repeat("x", 250<<10)}

func TestCutIsJqsCut(t *testing.T) {
	for _, s := range samples {
		got := jqString(t, "cut", s)
		assert.Equal(t, Cut(s), got, "%d bytes", len(s))
		assert.LessOrEqual(t, len(got), MaxKeptBytes)
	}
}

// cutmsg keeps a message as the hooks show it: cut to 1 KiB on its way
// to a status or an Event, the same from the whole message and from what
// the filter kept.
func TestCutmsgLeavesTheHooksCutAsItWas(t *testing.T) {
	for _, s := range samples {
		got := jqString(t, "cutmsg", s)
		assert.LessOrEqual(t, len(got), 4*1025, "%d bytes", len(s))
		assert.Equal(t, Truncate(s, MaxEventMessage), Truncate(got, MaxEventMessage), "%d bytes", len(s))
	}
}

// name, few and report let through what is within their bound and raise
// an error naming the field beyond it (the pod filter's try catches it).
func TestTheReportBoundsAreJqs(t *testing.T) {
	raised := func(fn string, v any) string {
		data, err := json.Marshal(map[string]any{"v": v})
		require.NoError(t, err)
		var out struct{ E string }
		require.NoError(t, helpers.JQRunOnString(context.Background(), JqTypes+`{e: (try (.v | `+fn+` | "") catch .)}`, string(data), &out))
		return out.E
	}
	for _, tt := range []struct {
		fn             string
		within, beyond any
		raises         string
	}{
		{`name("f")`, strings.Repeat("é", MaxNameBytes/2), strings.Repeat("a", MaxNameBytes+1), "f is longer than 320 bytes"},
		{`few("f")`, make([]int, MaxReportEntries), make([]int, MaxReportEntries+1), "f has more than 128 entries"},
		{`report("the backup report")`, map[string]string{"m": strings.Repeat("a", MaxReportBytes-10)}, map[string]string{"m": strings.Repeat("a", MaxReportBytes)},
			"the backup report is 131080 bytes of JSON, more than 131072"},
	} {
		t.Run(tt.fn, func(t *testing.T) {
			assert.Empty(t, raised(tt.fn, tt.within))
			assert.Equal(t, tt.raises, raised(tt.fn, tt.beyond))
		})
	}
	assert.Empty(t, raised(`name("f")`, nil), "a missing name is for the filter to default")
	assert.Equal(t, "f is of type number, want string", raised(`name("f")`, 7))
}
