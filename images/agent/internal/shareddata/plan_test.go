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
	"reflect"
	"strings"
	"testing"

	"github.com/deckhouse/managed-starrocks/images/agent/internal/backup"
	"github.com/deckhouse/managed-starrocks/pkg/agentconfig"
)

var testCNs = agentconfig.ComputeNodes{StatefulSet: "d8ms-sr-x-cn", HostFormat: "d8ms-sr-x-cn-%d.d8ms-sr-x-cn.ns.svc.cluster.local",
	HeartbeatPort: 9050, Min: 1, Max: 3}

func TestDesiredCountIsBounded(t *testing.T) {
	for replicas, want := range map[int32]int32{-5: 1, 0: 1, 1: 1, 2: 2, 3: 3, 4: 3, 1 << 30: 3} {
		if got := DesiredCount(replicas, testCNs); got != want {
			t.Errorf("DesiredCount(%d) = %d, want %d", replicas, got, want)
		}
	}
	if got := DesiredHosts(testCNs, 2); !reflect.DeepEqual(got, []string{
		"d8ms-sr-x-cn-0.d8ms-sr-x-cn.ns.svc.cluster.local", "d8ms-sr-x-cn-1.d8ms-sr-x-cn.ns.svc.cluster.local"}) {
		t.Errorf("DesiredHosts = %v", got)
	}
}

func TestDecideComputeNodes(t *testing.T) {
	h := func(i int) string { return DesiredHosts(testCNs, int32(i+1))[i] }
	hp := func(i int) string { return h(i) + ":9050" }
	for _, tc := range []struct {
		name string
		want int
		cns  []ComputeNode
		plan CNPlan
	}{
		{name: "new instance", want: 2, plan: CNPlan{Add: []string{hp(0), hp(1)}}},
		{name: "listed not alive is kept while desired", want: 2,
			cns: []ComputeNode{{Host: h(0), HeartbeatPort: 9050}, {Host: h(1), HeartbeatPort: 9050, Alive: true}}},
		{name: "scale in: an alive CN beyond the count waits, an exited one goes", want: 1,
			cns: []ComputeNode{{Host: h(0), HeartbeatPort: 9050, Alive: true}, {Host: h(1), HeartbeatPort: 9050, Alive: true, RunningQueries: 3},
				{Host: h(2), HeartbeatPort: 9050}},
			plan: CNPlan{Drop: []string{hp(2)}, Leaving: []string{hp(1)}}},
		{name: "scale in: a CN in its graceful exit (not alive, SHUTDOWN) still runs queries and waits; a disconnected one goes", want: 1,
			cns: []ComputeNode{{Host: h(0), HeartbeatPort: 9050, Alive: true, Status: "OK"}, {Host: h(1), HeartbeatPort: 9050, Status: StatusShutdown, RunningQueries: 2},
				{Host: h(2), HeartbeatPort: 9050, Status: "DISCONNECTED"}, {Host: h(3), HeartbeatPort: 9050, Status: "CONNECTING"}},
			plan: CNPlan{Drop: []string{hp(2), hp(3)}, Leaving: []string{hp(1)}}},
		{name: "a CN added by hand on another port is not the desired one", want: 1,
			cns:  []ComputeNode{{Host: h(0), HeartbeatPort: 9999}},
			plan: CNPlan{Add: []string{hp(0)}, Drop: []string{h(0) + ":9999"}}},
		{name: "host names compare without case or trailing dot", want: 1,
			cns: []ComputeNode{{Host: strings.ToUpper(h(0)) + ".", HeartbeatPort: 9050}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.cns {
				tc.cns[i].Host = normHost(tc.cns[i].Host)
			}
			got := DecideComputeNodes(DesiredHosts(testCNs, int32(tc.want)), 9050, tc.cns)
			if !reflect.DeepEqual(got, tc.plan) {
				t.Errorf("plan = %+v, want %+v", got, tc.plan)
			}
		})
	}
}

func testVolume() Volume {
	return Volume{Name: agentconfig.StorageVolumeName("0b5e7c1d-2222-4333-8444-955566667777"),
		Location: "s3://bucket/prefix/ns/x/0b5e7c1d-2222-4333-8444-955566667777", Endpoint: "https://s3.example.com:9000",
		PathStyle: true, EnableSSL: true, Keys: backup.Keys{AccessKey: "AKIAEXAMPLE", SecretKey: "c2VjcmV0+/=._-"}}
}

// Every string the statements carry is checked; a hostile one is refused
// naming the field, and a key never appears in the error.
func TestVolumeValidateRefusesWhatCouldLeaveItsQuotes(t *testing.T) {
	for field, edit := range map[string]func(*Volume){
		"name":              func(v *Volume) { v.Name = "sv`; DROP DATABASE x; --" },
		"location":          func(v *Volume) { v.Location = `s3://bucket/p") PROPERTIES ("x"="y` },
		"location scheme":   func(v *Volume) { v.Location = "hdfs://bucket/p" },
		"location dotdot":   func(v *Volume) { v.Location = "s3://bucket/a/../b" },
		"endpoint":          func(v *Volume) { v.Endpoint = `https://h", "aws.s3.use_instance_profile" = "true` },
		"region":            func(v *Volume) { v.Region = `us"east` },
		"access key":        func(v *Volume) { v.Keys.AccessKey = `AK"IA` },
		"secret key":        func(v *Volume) { v.Keys.SecretKey = `se'cret\` },
		"enableSSL on http": func(v *Volume) { v.Endpoint = "http://s3.example.com" },
	} {
		v := testVolume()
		edit(&v)
		err := v.Validate()
		if err == nil {
			t.Errorf("%s: accepted", field)
			continue
		}
		if strings.Contains(err.Error(), v.Keys.SecretKey) || strings.Contains(err.Error(), v.Keys.AccessKey) {
			t.Errorf("%s: a key in %q", field, err)
		}
	}
	if err := testVolume().Validate(); err != nil {
		t.Fatalf("a good volume: %v", err)
	}
}

func TestStatementsCarryTheProperties(t *testing.T) {
	v := testVolume()
	create := v.createStatement()
	want := "CREATE STORAGE VOLUME IF NOT EXISTS `" + v.Name + "` TYPE = S3 LOCATIONS = (\"" + v.Location + "\") PROPERTIES ("
	if !strings.HasPrefix(create, want) {
		t.Fatalf("%s\ndoes not start with\n%s", create, want)
	}
	alter := v.alterStatement()
	if strings.Contains(alter, "s3://") || !strings.HasPrefix(alter, "ALTER STORAGE VOLUME `"+v.Name+"` SET (") {
		t.Fatalf("ALTER names the location or has another form: %s", alter)
	}
	for _, p := range []string{`"aws.s3.endpoint" = "https://s3.example.com:9000"`, `"aws.s3.region" = "us-east-1"`,
		`"aws.s3.enable_path_style_access" = "true"`, `"aws.s3.enable_ssl" = "true"`, `"aws.s3.access_key" = "AKIAEXAMPLE"`,
		`"aws.s3.use_instance_profile" = "false"`} {
		if !strings.Contains(create, p) || !strings.Contains(alter, p) {
			t.Errorf("%s missing", p)
		}
	}
	other := v
	other.Keys.SecretKey = "another"
	if other.Fingerprint() == v.Fingerprint() {
		t.Error("new keys, same fingerprint")
	}
	if strings.Contains(v.Fingerprint(), v.Keys.SecretKey) {
		t.Error("the fingerprint holds the key")
	}
	if got := v.Scrub("denied for " + v.Keys.AccessKey + "/" + v.Keys.SecretKey); strings.Contains(got, v.Keys.AccessKey) || strings.Contains(got, v.Keys.SecretKey) {
		t.Errorf("Scrub = %q", got)
	}
}

func TestValidateComputeNodes(t *testing.T) {
	if err := Validate(testCNs); err != nil {
		t.Fatalf("the module's form: %v", err)
	}
	for name, edit := range map[string]func(*agentconfig.ComputeNodes){
		"no ordinal":        func(c *agentconfig.ComputeNodes) { c.HostFormat = "cn.ns.svc" },
		"two ordinals":      func(c *agentconfig.ComputeNodes) { c.HostFormat = "cn-%d-%d.ns.svc" },
		"another verb":      func(c *agentconfig.ComputeNodes) { c.HostFormat = "cn-%s.ns.svc" },
		"a quote":           func(c *agentconfig.ComputeNodes) { c.HostFormat = `cn-%d.ns", "x:1` },
		"upper case":        func(c *agentconfig.ComputeNodes) { c.HostFormat = "CN-%d.ns.svc" },
		"port":              func(c *agentconfig.ComputeNodes) { c.HeartbeatPort = 70000 },
		"max below min":     func(c *agentconfig.ComputeNodes) { c.Min, c.Max = 3, 1 },
		"a 300-letter name": func(c *agentconfig.ComputeNodes) { c.HostFormat = strings.Repeat("a", 300) + "%d.ns" },
	} {
		c := testCNs
		edit(&c)
		if err := Validate(c); err == nil {
			t.Errorf("%s: accepted %+v", name, c)
		}
	}
}
