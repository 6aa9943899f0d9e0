package instances

import (
	"context"
	"testing"

	"github.com/deckhouse/module-sdk/testing/helpers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func filterOf(t *testing.T, name string) string {
	t.Helper()
	for _, b := range Config.Kubernetes {
		if b.Name == name {
			return b.JqFilter
		}
	}
	t.Fatalf("no binding %s", name)
	return ""
}

func TestPodFilterKeepsOnlyTheAgentsTLSVerdict(t *testing.T) {
	pod := func(annotations string) string {
		return `{"metadata":{"name":"p-0","namespace":"team","labels":{"app.kubernetes.io/instance":"olap"}` + annotations + `}}`
	}
	for _, tt := range []struct {
		name string
		in   string
		want *AgentTLS
	}{
		{"no annotation: not reported", pod(""), nil},
		{"a verdict without the timestamp", pod(`,"annotations":{"managed-starrocks.deckhouse.io/agent-status":"{\"tls\":{\"ready\":true,\"serial\":\"ab\"},\"updatedAt\":\"2026-12-02T10:00:00Z\"}"}`), &AgentTLS{Ready: true}},
		{"garbage: not ready, with a reason", pod(`,"annotations":{"managed-starrocks.deckhouse.io/agent-status":"not json"}`), &AgentTLS{Reason: "AgentStatusUnreadable", Message: "the agent-status annotation is not valid JSON"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got PodSnap
			require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapPods), tt.in, &got))
			assert.Equal(t, "olap", got.Instance)
			assert.Equal(t, tt.want, got.AgentTLS)
		})
	}
}

func TestStarrocksFilterNeverIncludesStatus(t *testing.T) {
	var got map[string]any
	require.NoError(t, helpers.JQRunOnString(context.Background(), filterOf(t, SnapStarrocks),
		`{"metadata":{"name":"a","namespace":"n","uid":"u","generation":2,"resourceVersion":"9"},"spec":{"type":"Standalone"},"status":{"phase":"Running"}}`, &got))
	assert.Equal(t, map[string]any{"metadata": map[string]any{"name": "a", "namespace": "n", "uid": "u", "generation": float64(2)}, "spec": map[string]any{"type": "Standalone"}}, got,
		"a status patch (or a resourceVersion bump) must not change the snapshot, or the hook would trigger itself")
}
