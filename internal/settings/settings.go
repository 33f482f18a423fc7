// Package settings is the form in which a package hands the configuration
// the environment variables it reads: their names, which of them hold a
// credential, and a check of their values. The configuration reads,
// validates and logs them through it, without importing the package that
// owns them; that package reads its typed settings from the values the
// configuration read.
package settings

import "strings"

// Var is one environment variable.
type Var struct {
	Name string
	// Secret marks a credential: never logged, and taken from a secret
	// store by deployment files, never written into them.
	Secret bool
}

// Section is the settings of one part: a mail provider's, the SMS
// provider's, the Temporal client's.
type Section struct {
	// Name groups the section's values in the logged configuration.
	Name string
	Vars []Var
	// Check reports what is wrong with the values read through get,
	// naming the variable; nil when nothing is. A nil Check checks
	// nothing.
	Check func(get func(string) string) error
	// Unlogged: the owner logs the values itself where it uses them (the
	// Temporal client, with its secrets masked), so the configuration
	// does not.
	Unlogged bool
}

// Values are the values of the sections' variables as a process read
// them, trimmed; an unset variable is absent.
type Values map[string]string

// Get is the value of a variable, "" when unset.
func (v Values) Get(name string) string { return v[name] }

// Read reads the variables of vars through getenv.
func Read(getenv func(string) string, vars []Var) Values {
	out := Values{}
	for _, v := range vars {
		if s := strings.TrimSpace(getenv(v.Name)); s != "" {
			out[v.Name] = s
		}
	}
	return out
}
