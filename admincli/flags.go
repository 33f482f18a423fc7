package admincli

import "flag"

// parseInterspersed parses args with fs, flags before, between and after
// the positional arguments ("import FILE --account acc-…" as well as
// "import --account acc-… FILE"), and returns the positional ones in
// order. "-" is positional (standard input); after "--" everything is.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
