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

package instances

import (
	"fmt"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// readyOfDesired is a component's ready pods of the desired ones, "2/3",
// the column kubectl get shows. A StatefulSet that briefly holds more ready
// pods than desired (a scale-in in progress) shows them: the column says
// what runs. Both numbers are held to the CRD's pattern (0 to 999): a
// status the API server refuses would fail the hook run.
func readyOfDesired(c v1alpha1.ComponentStatus) string {
	bound := func(n int32) int32 { return min(max(n, 0), 999) }
	return fmt.Sprintf("%d/%d", bound(c.ReadyReplicas), bound(c.Replicas))
}
