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
