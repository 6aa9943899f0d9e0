// Command hooks is the module's hooks binary (module-sdk): addon-operator
// asks it for its hooks with `hook config` and runs one with `hook run`.
package main

import (
	"github.com/deckhouse/module-sdk/pkg/app"

	_ "github.com/deckhouse/managed-starrocks/hooks/credentials"
	_ "github.com/deckhouse/managed-starrocks/hooks/defaultclass"
	_ "github.com/deckhouse/managed-starrocks/hooks/instances"
	_ "github.com/deckhouse/managed-starrocks/hooks/webhookcert"
)

func main() {
	app.Run()
}
