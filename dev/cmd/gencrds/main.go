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

// Command gencrds turns controller-gen's CRD output into the module's crds/
// files (see package crdgen).
//
//	gencrds <controller-gen output dir> <crds dir>
package main

import (
	"fmt"
	"os"

	"github.com/deckhouse/managed-starrocks/dev/crdgen"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gencrds <controller-gen output dir> <crds dir>")
		os.Exit(2)
	}
	if err := crdgen.Generate(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "gencrds:", err)
		os.Exit(1)
	}
}
