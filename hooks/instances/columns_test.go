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
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/deckhouse/managed-starrocks/api/v1alpha1"
)

// TestReadyOfDesiredKeepsToTheCRDPattern: whatever the StatefulSet reports,
// the column value is one the CRD accepts (a refused status patch fails the
// hook run for every instance).
func TestReadyOfDesiredKeepsToTheCRDPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[0-9]{1,3}/[0-9]{1,3}$`) // api/v1alpha1 ComponentStatus.Ready
	for _, c := range []struct {
		in   v1alpha1.ComponentStatus
		want string
	}{
		{v1alpha1.ComponentStatus{Replicas: 3, ReadyReplicas: 2}, "2/3"},
		{v1alpha1.ComponentStatus{Replicas: 3, ReadyReplicas: 4}, "4/3"},
		{v1alpha1.ComponentStatus{Replicas: 3, ReadyReplicas: -1}, "0/3"},
		{v1alpha1.ComponentStatus{Replicas: 3, ReadyReplicas: 1 << 30}, "999/3"},
	} {
		got := readyOfDesired(c.in)
		assert.Equal(t, c.want, got)
		assert.Regexp(t, pattern, got)
	}
}
