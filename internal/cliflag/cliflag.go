// Package cliflag defines the flags several streamha commands share —
// --config, --strategy, --seed, --out, --json and --force — once each: the
// name, the type, the frame of the help text, the default and the
// validation. A command says only what is its own: what runs without
// --config, what --out holds. A bad value is refused while the flags are
// parsed, with an error naming the flag (the CLI exits with status 2).
// The streamha command and the node process (cluster.BindNodeFlags, which
// the launched processes parse) both use it.
package cliflag

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/streamha/streamha/strategies"
)

// ConfigUsage starts the help text of every --config.
const ConfigUsage = "experiment YAML file or built-in example name"

// AddConfig adds --config: an experiment file or the name of a built-in
// example; fallback says what runs without it.
func AddConfig(fl *pflag.FlagSet, p *string, fallback string) {
	fl.StringVar(p, "config", "", ConfigUsage+" (default: "+fallback+")")
}

// StrategyList is the value of --strategy where a command runs several
// strategies: registered names, comma-separated (each once, in the order
// given), or "all".
type StrategyList struct{ p *string }

func (s StrategyList) String() string { return *s.p }

// Type implements pflag.Value.
func (s StrategyList) Type() string { return "names" }

// Set implements pflag.Value: it refuses an unregistered name.
func (s StrategyList) Set(v string) error {
	if strings.TrimSpace(v) != "all" {
		if _, err := SplitStrategies(v); err != nil {
			return err
		}
	}
	*s.p = strings.TrimSpace(v)
	return nil
}

// AddStrategies adds --strategy for a command that runs several
// strategies, listing the registered ones in its help; fallback says which
// run without it.
func AddStrategies(fl *pflag.FlagSet, p *string, fallback string) {
	fl.Var(StrategyList{p}, "strategy", "comma-separated strategies ("+strings.Join(strategies.Names(false), ", ")+
		"), or \"all\" (default: "+fallback+")")
}

// SplitStrategies reads a comma-separated list of registered strategy
// names, each once, in the order given.
func SplitStrategies(list string) ([]string, error) {
	var ns []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if _, err := strategies.Lookup(n); err != nil {
			return nil, err
		}
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	if len(ns) == 0 {
		return nil, errors.New("no strategy named")
	}
	return ns, nil
}

// OneStrategy is the value of --strategy where a command takes one
// registered strategy.
type OneStrategy struct{ p *string }

func (s OneStrategy) String() string { return *s.p }

// Type implements pflag.Value.
func (s OneStrategy) Type() string { return "name" }

// Set implements pflag.Value: it refuses an unregistered name.
func (s OneStrategy) Set(v string) error {
	v = strings.TrimSpace(v)
	if _, err := strategies.Lookup(v); err != nil {
		return err
	}
	*s.p = v
	return nil
}

// AddStrategy adds --strategy for a command that takes one strategy; what
// says what it picks.
func AddStrategy(fl *pflag.FlagSet, p *string, what string) {
	fl.Var(OneStrategy{p}, "strategy", what)
}

// Seed is the value of --seed: a whole number from 0 to 2^64−1, like an
// experiment's seed, or nothing (the zero Seed).
type Seed struct {
	v   uint64
	set bool
}

// SeedOf is the seed v, as a default.
func SeedOf(v uint64) Seed { return Seed{v: v, set: true} }

func (s *Seed) String() string {
	if !s.set {
		return ""
	}
	return strconv.FormatUint(s.v, 10)
}

// Type implements pflag.Value.
func (s *Seed) Type() string { return "uint" }

// Set implements pflag.Value.
func (s *Seed) Set(v string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number from 0 to %d", uint64(1<<64-1))
	}
	s.v, s.set = n, true
	return nil
}

// Value is the seed given (or defaulted), or nil.
func (s *Seed) Value() *uint64 {
	if !s.set {
		return nil
	}
	v := s.v
	return &v
}

// AddSeed adds --seed; what says what it seeds and what runs without it.
func AddSeed(fl *pflag.FlagSet, p *Seed, what string) {
	fl.Var(p, "seed", what)
}

// OutKind says what --out names.
type OutKind int

const (
	// OutDir: a directory, created when missing.
	OutDir OutKind = iota
	// OutFile: a file.
	OutFile
)

// OutPath is the value of --out: a path that is not empty and, for a
// directory, not an existing file (or, for a file, not a directory).
type OutPath struct {
	p    *string
	kind OutKind
}

func (o OutPath) String() string { return *o.p }

// Type implements pflag.Value.
func (o OutPath) Type() string {
	if o.kind == OutFile {
		return "file"
	}
	return "dir"
}

// Set implements pflag.Value.
func (o OutPath) Set(v string) error {
	if v == "" {
		return errors.New("empty path (leave --out out for the default)")
	}
	fi, err := os.Stat(v)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	case err == nil && o.kind == OutDir && !fi.IsDir():
		return fmt.Errorf("%s is a file, not a directory", v)
	case err == nil && o.kind == OutFile && fi.IsDir():
		return fmt.Errorf("%s is a directory, not a file", v)
	}
	*o.p = v
	return nil
}

// AddOut adds --out (with shorthand, "" for none); what says what is
// written there and where without it. The default is *p's value.
func AddOut(fl *pflag.FlagSet, p *string, kind OutKind, shorthand, what string) {
	fl.VarP(OutPath{p, kind}, "out", shorthand, what)
}

// JSONUsage frames the help text of every --json.
const (
	JSONUsage    = "print "
	JSONUsageEnd = " as JSON on stdout instead of the text"
)

// AddJSON adds --json; what names what is printed as JSON.
func AddJSON(fl *pflag.FlagSet, p *bool, what string) {
	fl.BoolVar(p, "json", false, JSONUsage+what+JSONUsageEnd)
}

// ForceUsage starts the help text of every --force.
const ForceUsage = "replace "

// AddForce adds --force; what says what it replaces.
func AddForce(fl *pflag.FlagSet, p *bool, what string) {
	fl.BoolVar(p, "force", false, ForceUsage+what)
}
