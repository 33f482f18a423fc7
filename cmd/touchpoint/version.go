package main

import "runtime/debug"

// version is the release this binary was built as, set by the build:
// `make build VERSION=…` and `make build-prod VERSION=…` (the Dockerfile's
// VERSION argument) link it in with -ldflags -X main.version=….
var version string

// buildVersion is the binary's version, which a versioned worker uses as
// its Build ID: the one the build set, else the one the go command
// stamped from version control (a pseudo-version of the commit, +dirty
// for uncommitted changes), else "devel".
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
