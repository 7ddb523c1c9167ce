package main

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

// The flags several commands share — --config, --strategy, --seed, --out,
// --json and --force — are defined here, once each: the name, the type,
// the frame of the help text, the default and the validation. A command
// says only what is its own: what runs without --config, what --out holds.
// A bad value is refused while the flags are parsed, as a usage error
// (exit status 2) naming the flag.

// addConfigFlag adds --config: an experiment file or the name of a
// built-in example (loadExperiment reads it, the examples as a fallback);
// fallback says what runs without it.
func addConfigFlag(fl *pflag.FlagSet, p *string, fallback string) {
	fl.StringVar(p, "config", "", "experiment YAML file or built-in example name (default: "+fallback+")")
}

// strategyList is the value of --strategy: registered strategy names,
// comma-separated (each once, in the order given), or "all".
type strategyList struct{ p *string }

func (s strategyList) String() string { return *s.p }
func (s strategyList) Type() string   { return "names" }

func (s strategyList) Set(v string) error {
	if strings.TrimSpace(v) != "all" {
		if _, err := splitStrategies(v); err != nil {
			return err
		}
	}
	*s.p = strings.TrimSpace(v)
	return nil
}

// addStrategyFlag adds --strategy, listing the registered strategies in
// its help; fallback says which run without it.
func addStrategyFlag(fl *pflag.FlagSet, p *string, fallback string) {
	fl.Var(strategyList{p}, "strategy", "comma-separated strategies ("+strings.Join(strategies.Names(false), ", ")+
		"), or \"all\" (default: "+fallback+")")
}

// splitStrategies reads a comma-separated list of registered strategy
// names, each once, in the order given.
func splitStrategies(list string) ([]string, error) {
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

// oneStrategy is the value of --strategy where a command takes one
// registered strategy.
type oneStrategy struct{ p *string }

func (s oneStrategy) String() string { return *s.p }
func (s oneStrategy) Type() string   { return "name" }

func (s oneStrategy) Set(v string) error {
	v = strings.TrimSpace(v)
	if _, err := strategies.Lookup(v); err != nil {
		return err
	}
	*s.p = v
	return nil
}

// addOneStrategyFlag adds --strategy for a command that takes one
// strategy; what says what it picks.
func addOneStrategyFlag(fl *pflag.FlagSet, p *string, what string) {
	fl.Var(oneStrategy{p}, "strategy", what)
}

// seedFlag is the value of --seed: a whole number from 0 to 2^64−1, like
// an experiment's seed, or unset.
type seedFlag struct {
	v   uint64
	set bool
}

func (s *seedFlag) String() string {
	if !s.set {
		return ""
	}
	return strconv.FormatUint(s.v, 10)
}

func (s *seedFlag) Type() string { return "uint" }

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number from 0 to %d", uint64(1<<64-1))
	}
	s.v, s.set = n, true
	return nil
}

// value is the seed given, or nil.
func (s *seedFlag) value() *uint64 {
	if !s.set {
		return nil
	}
	return &s.v
}

// addSeedFlag adds --seed; what says what it seeds and what runs without
// it.
func addSeedFlag(fl *pflag.FlagSet, p *seedFlag, what string) {
	fl.Var(p, "seed", what)
}

// outKind says what --out names.
type outKind int

const (
	outDir  outKind = iota // a directory, created when missing
	outFile                // a file
)

// outPath is the value of --out: a path that is not empty and, for a
// directory, not an existing file (or, for a file, not a directory).
type outPath struct {
	p    *string
	kind outKind
}

func (o outPath) String() string { return *o.p }
func (o outPath) Type() string {
	if o.kind == outFile {
		return "file"
	}
	return "dir"
}

func (o outPath) Set(v string) error {
	if v == "" {
		return errors.New("empty path (leave --out out for the default)")
	}
	fi, err := os.Stat(v)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	case err == nil && o.kind == outDir && !fi.IsDir():
		return fmt.Errorf("%s is a file, not a directory", v)
	case err == nil && o.kind == outFile && fi.IsDir():
		return fmt.Errorf("%s is a directory, not a file", v)
	}
	*o.p = v
	return nil
}

// addOutFlag adds --out (with shorthand, "" for none); what says what is
// written there and what without it.
func addOutFlag(fl *pflag.FlagSet, p *string, kind outKind, shorthand, what string) {
	fl.VarP(outPath{p, kind}, "out", shorthand, what)
}

// addJSONFlag adds --json; what names what is printed as JSON.
func addJSONFlag(fl *pflag.FlagSet, p *bool, what string) {
	fl.BoolVar(p, "json", false, "print "+what+" as JSON on stdout instead of the text")
}

// addForceFlag adds --force; what says what it replaces.
func addForceFlag(fl *pflag.FlagSet, p *bool, what string) {
	fl.BoolVar(p, "force", false, "replace "+what)
}
