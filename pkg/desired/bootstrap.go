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

package desired

// Bootstrapped says whether the instance's FE cluster exists, so that no FE
// may start a new one any more (agentconfig.Config.Bootstrapped). The FE
// with ordinal 0 starts a new cluster whenever its meta directory is empty;
// once the cluster exists, an empty meta directory means a lost volume, and
// a second, empty cluster behind the same client Service would hide the
// real one from every client.
//
// The fact used is AccountsReady: root's password can only be set once FE-0
// has bootstrapped. The report it comes from is a pod annotation the tenant
// can write too, so the hooks let it only move forward: once True the
// condition stays True while the Starrocks exists, whatever a later report
// says, and the last valid entry in the module namespace remembers it as
// well; it outlives every pod and volume of the instance. Before it is True
// the instance holds no data anyone could have written: starting over is
// harmless.
func Bootstrapped(ex Existing) bool { return ex.AccountsReady }
