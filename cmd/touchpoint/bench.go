package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/touchpoint/touchpoint/bench"
	"github.com/touchpoint/touchpoint/bench/capacity"
)

// runBench is `touchpoint bench`: the load generator of package
// bench, printing its result (or with --capacity its measurements) as one
// JSON line. Without --base-url it starts this very executable as
// `touchpoint dev`.
func (env *environment) runBench(ctx context.Context, args []string) error {
	o, err := bench.ParseFlags(args, env.getenv, env.stderr)
	if err != nil {
		return err
	}
	if o.Executable, err = os.Executable(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	o.LogLevel, o.Stderr = env.getenv("TOUCHPOINT_LOG_LEVEL"), env.stderr
	var res any // a typed nil would print "null"
	if o.Capacity.On {
		var m *capacity.Measurements
		if m, err = bench.Capacity(ctx, o); m != nil {
			res = m
		}
	} else {
		var r *bench.Result
		if r, err = bench.Run(ctx, o); r != nil {
			res = r
		}
	}
	if res != nil {
		line, jerr := json.Marshal(res)
		if jerr != nil {
			return errors.Join(err, jerr)
		}
		fmt.Fprintln(env.stdout, string(line))
	}
	return err
}
