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

// Command coredns is CoreDNS with only the plugins the local node (dev/node)
// needs: it answers the cluster domain from the API server and nothing else.
// Leaving out forward (and every other plugin that reaches outside) means a
// name outside the cluster domain can never be sent anywhere, and the build is
// a fraction of the full one. CoreDNS selects plugins at compile time through
// dnsserver.Directives, the order they run in (its plugin.cfg). Development
// tooling, never shipped.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// The order of plugin.cfg, restricted to the plugins imported above.
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "kubernetes"}
}

func main() { coremain.Run() }
