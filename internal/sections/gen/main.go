// Command gen writes config's copy of the sections' variables to the
// file its argument names: `go generate ./internal/sections` after a
// section changes.
package main

import (
	"log"
	"os"

	"github.com/touchpoint/touchpoint/internal/sections"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: gen FILE")
	}
	src, err := sections.ConfigSource()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(os.Args[1], src, 0o644); err != nil {
		log.Fatal(err)
	}
}
