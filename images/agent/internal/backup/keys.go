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

package backup

import (
	"context"
	"fmt"
	"strings"
)

// SecretGetter reads a Secret of the agent's namespace by name (the
// agent's KubeSecrets; its Role allows exactly the referenced Secrets).
type SecretGetter interface {
	Get(ctx context.Context, name string) (map[string][]byte, error)
}

// ReadKeys reads the access keys from the team's Secret: accessField and
// secretField are its data keys. Errors name the Secret and the missing
// key, never a value. A trailing newline (kubectl create secret
// --from-file) is dropped.
func ReadKeys(ctx context.Context, g SecretGetter, name, accessField, secretField string) (Keys, error) {
	data, err := g.Get(ctx, name)
	if err != nil {
		return Keys{}, fmt.Errorf("read the storage keys from Secret %s: %w", name, err)
	}
	get := func(field string) (string, error) {
		v, ok := data[field]
		if !ok || len(strings.TrimRight(string(v), "\r\n")) == 0 {
			return "", fmt.Errorf("Secret %s has no key %q (or it is empty): the storage keys are read from its keys %q and %q", name, field, accessField, secretField)
		}
		v2 := strings.TrimRight(string(v), "\r\n")
		if !reKey.MatchString(v2) {
			return "", fmt.Errorf("Secret %s, key %q: must be 1-256 characters of A-Z a-z 0-9 + / = . _ -", name, field)
		}
		return v2, nil
	}
	var k Keys
	if k.AccessKey, err = get(accessField); err != nil {
		return Keys{}, err
	}
	if k.SecretKey, err = get(secretField); err != nil {
		return Keys{}, err
	}
	return k, nil
}
