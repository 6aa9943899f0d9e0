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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

// CacheStats are a CN's block cache lookups since it started: how many the
// cache answered and how many went to the object storage.
//
// A CN's /metrics has no such counts before StarRocks' main of July 2026
// (block_cache_hit_count and _miss_count, StarRocks/starrocks#58204), and
// its block_cache_hit_bytes and _miss_bytes count the reads of external
// tables only (cache/data_cache_hit_rate_counter.hpp, fed by the scanners
// of external files). Its HTTP API has had them since 3.3: GET
// /api/datacache/stat on be_http_port (be/src/service/service_be
// http_service.cpp registers /api/datacache/{action}; http/action
// datacache_action.cpp _handle_stat writes the StarCache instance's level-1
// "hit_count" and "miss_count", which later versions name
// "block_cache_hit_count" and "block_cache_miss_count", docs
// data_source/data_cache_observe). Since 3.4 a CN's cloud-native tables
// read through that same instance (the unified Data Cache).
type CacheStats struct {
	Hits, Misses int64
}

// maxStatBytes bounds what is read of an answer (the real one is about 2 KiB).
const maxStatBytes = 64 << 10

// ReadCacheStats asks the CN at host for its block cache lookups.
func ReadCacheStats(ctx context.Context, client *http.Client, host string, httpPort int) (CacheStats, error) {
	url := "http://" + net.JoinHostPort(host, strconv.Itoa(httpPort)) + "/api/datacache/stat"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return CacheStats{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return CacheStats{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatBytes))
	if err != nil {
		return CacheStats{}, fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return CacheStats{}, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseCacheStats(body)
}

func parseCacheStats(body []byte) (CacheStats, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return CacheStats{}, fmt.Errorf("the answer is not a JSON object: %w", err)
	}
	// A CN whose cache is not initialised answers 200 with
	// {"error": "Cache system is not ready"} (DataCacheAction::handle).
	if msg, ok := doc["error"]; ok {
		var s string
		_ = json.Unmarshal(msg, &s)
		return CacheStats{}, fmt.Errorf("the CN answers: %s", s)
	}
	count := func(names ...string) (int64, error) {
		for _, n := range names {
			if raw, ok := doc[n]; ok {
				var v int64
				if err := json.Unmarshal(raw, &v); err != nil || v < 0 {
					return 0, fmt.Errorf("%s is not a count: %s", n, raw)
				}
				return v, nil
			}
		}
		return 0, errors.New("the answer has no " + names[0])
	}
	hits, err := count("block_cache_hit_count", "hit_count")
	if err != nil {
		return CacheStats{}, err
	}
	misses, err := count("block_cache_miss_count", "miss_count")
	if err != nil {
		return CacheStats{}, err
	}
	return CacheStats{Hits: hits, Misses: misses}, nil
}

// OwnComputeNodes are the live CNs of cns that are the instance's own
// (hosts of its CN StatefulSet up to its maximum): the only ones whose
// cache the agent asks about.
func OwnComputeNodes(c agentconfig.ComputeNodes, cns []ComputeNode) []string {
	own := map[string]bool{}
	for _, h := range DesiredHosts(c, c.Max) {
		own[h] = true
	}
	var out []string
	for _, cn := range cns {
		if h := normHost(cn.Host); cn.Alive && own[h] {
			out = append(out, h)
		}
	}
	return out
}
