//go:build nodev

package main

import (
	"context"
	"errors"
)

// devSummary is what the usage says of `dev` in this build.
const devSummary = "not in this build (built with -tags nodev)"

func (env *environment) runDev(context.Context, []string) error {
	return errors.New("this is the production build, without the embedded Temporal server; build with `make build` for `touchpoint dev`")
}
