//go:build nodev

package main

import (
	"context"
	"errors"
)

func init() {
	commands["dev"] = command{"not in this build (built with -tags nodev)", func(context.Context, *environment, []string) error {
		return errors.New("this is the production build, without the embedded Temporal server; build with `make build` for `touchpoint dev`")
	}}
}
