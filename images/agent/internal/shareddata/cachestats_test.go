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

package shareddata

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The answers of /api/datacache/stat a CN gives, as StarRocks writes them
// (http/action/datacache_action.cpp _handle_stat; docs
// data_source/data_cache_observe for the later names), and what the agent
// reads from them.
func TestReadCacheStats(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       CacheStats
		wantErr    string
	}{
		{name: "the StarCache instance's counts", status: 200,
			body: `{"status":"NORMAL","mem_quota_bytes":0,"disk_quota_bytes":107374182400,"hit_count":57707,"miss_count":2556,"hit_rate":0.96,"hit_bytes":15126253744,"miss_bytes":620687633,"hit_count_last_minute":18108}`,
			want: CacheStats{Hits: 57707, Misses: 2556}},
		{name: "the later names, beside the page cache's", status: 200,
			body: `{"page_cache_hit_count":276890,"page_cache_miss_count":153126,"block_cache_status":"NORMAL","block_cache_hit_count":57707,"block_cache_miss_count":2556,"block_cache_hit_bytes":15126253744}`,
			want: CacheStats{Hits: 57707, Misses: 2556}},
		{name: "a cache not initialised", status: 200, body: `{"error":"Cache system is not ready"}`, wantErr: "Cache system is not ready"},
		{name: "no counts", status: 200, body: `{"status":"NORMAL","hit_rate":0.5}`, wantErr: "no block_cache_hit_count"},
		{name: "a count that is none", status: 200, body: `{"hit_count":"many","miss_count":1}`, wantErr: "hit_count is not a count"},
		{name: "a negative count", status: 200, body: `{"hit_count":1,"miss_count":-1}`, wantErr: "miss_count is not a count"},
		{name: "not JSON", status: 200, body: `<html>`, wantErr: "not a JSON object"},
		{name: "an action the CN does not have", status: 404, body: "Not Found", wantErr: "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/datacache/stat" || r.Method != http.MethodGet {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			p, _ := strconv.Atoi(port)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := ReadCacheStats(ctx, srv.Client(), host, p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ReadCacheStats = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// Only the live CNs of the instance's own StatefulSet are asked: a host
// StarRocks lists that is not one of them is never dialled.
func TestOwnComputeNodes(t *testing.T) {
	cns := []ComputeNode{
		{Host: "d8ms-sr-x-cn-0.d8ms-sr-x-cn.ns.svc.cluster.local", Alive: true},
		{Host: "D8MS-SR-X-CN-1.d8ms-sr-x-cn.ns.svc.cluster.local.", Alive: true},
		{Host: "d8ms-sr-x-cn-2.d8ms-sr-x-cn.ns.svc.cluster.local", Alive: false},
		{Host: "d8ms-sr-x-cn-3.d8ms-sr-x-cn.ns.svc.cluster.local", Alive: true},
		{Host: "metadata.internal", Alive: true},
	}
	want := []string{"d8ms-sr-x-cn-0.d8ms-sr-x-cn.ns.svc.cluster.local", "d8ms-sr-x-cn-1.d8ms-sr-x-cn.ns.svc.cluster.local"}
	if got := OwnComputeNodes(testCNs, cns); !reflect.DeepEqual(got, want) {
		t.Fatalf("OwnComputeNodes = %v, want %v (CN 3 is beyond Max 3, CN 2 is not alive)", got, want)
	}
}
