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

// Command hooks is the module's hooks binary (module-sdk): addon-operator
// asks it for its hooks with `hook config` and runs one with `hook run`.
package main

import (
	"github.com/deckhouse/module-sdk/pkg/app"

	_ "github.com/deckhouse/managed-starrocks/hooks/credentials"
	_ "github.com/deckhouse/managed-starrocks/hooks/defaultclass"
	_ "github.com/deckhouse/managed-starrocks/hooks/instanceobjects"
	_ "github.com/deckhouse/managed-starrocks/hooks/instances"
	_ "github.com/deckhouse/managed-starrocks/hooks/webhookcert"
)

func main() {
	app.Run()
}
