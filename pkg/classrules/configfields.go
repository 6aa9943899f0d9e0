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

package classrules

import "github.com/deckhouse/managed-starrocks/api/v1alpha1"

// configField is one configuration key: how to read and write it in the API
// type, where it lands in ResolvedConfiguration, its StarRocks default and
// its bounds (the CRD markers of v1alpha1.Configuration). Every loop over
// keys uses this table, so a new key is added in one place.
type configField struct {
	key      v1alpha1.ConfigurationKey
	get      func(*v1alpha1.Configuration) (int64, bool)
	set      func(*v1alpha1.Configuration, int64)
	resolved func(*ResolvedConfiguration) *int64
	def      int64
	min, max int64
}

var configFields = []configField{
	{
		key: v1alpha1.KeyStreamingLoadMaxMb,
		get: func(c *v1alpha1.Configuration) (int64, bool) {
			if c.StreamingLoadMaxMb == nil {
				return 0, false
			}
			return *c.StreamingLoadMaxMb, true
		},
		set:      func(c *v1alpha1.Configuration, v int64) { c.StreamingLoadMaxMb = &v },
		resolved: func(r *ResolvedConfiguration) *int64 { return &r.StreamingLoadMaxMb },
		def:      DefaultStreamingLoadMaxMb,
		min:      1, max: 10485760,
	},
	{
		key: v1alpha1.KeyLoadProcessMaxMemoryLimitPercent,
		get: func(c *v1alpha1.Configuration) (int64, bool) {
			if c.LoadProcessMaxMemoryLimitPercent == nil {
				return 0, false
			}
			return int64(*c.LoadProcessMaxMemoryLimitPercent), true
		},
		set: func(c *v1alpha1.Configuration, v int64) {
			p := int32(v)
			c.LoadProcessMaxMemoryLimitPercent = &p
		},
		resolved: func(r *ResolvedConfiguration) *int64 { return &r.LoadProcessMaxMemoryLimitPercent },
		def:      DefaultLoadProcessMaxMemoryLimitPercent,
		min:      1, max: 100,
	},
	{
		key: v1alpha1.KeyCatalogTrashExpireSecond,
		get: func(c *v1alpha1.Configuration) (int64, bool) {
			if c.CatalogTrashExpireSecond == nil {
				return 0, false
			}
			return *c.CatalogTrashExpireSecond, true
		},
		set:      func(c *v1alpha1.Configuration, v int64) { c.CatalogTrashExpireSecond = &v },
		resolved: func(r *ResolvedConfiguration) *int64 { return &r.CatalogTrashExpireSecond },
		def:      DefaultCatalogTrashExpireSecond,
		min:      0, max: 31536000,
	},
}
