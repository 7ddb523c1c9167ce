package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/labs"
	"github.com/streamha/streamha/strategies"
)

// addCompletions registers shell completion for the arguments and flags
// that take a name streamha knows: strategies from the registry, lab
// numbers, built-in example names and run directories. It walks the
// command tree by name, so a command file needs no edit for it.
func addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		for flag, fn := range map[string]cobra.CompletionFunc{
			"strategy": completeStrategies,
			"config":   completeExamples,
			"spec":     completeExamples,
			"run":      completeRunDirs,
		} {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, fn)
			}
		}
		switch c.CommandPath() {
		case "streamha lab show", "streamha lab init", "streamha lab check", "streamha lab guide":
			c.ValidArgsFunction = completeLabs
		case "streamha examples":
			c.ValidArgsFunction = completeExampleNames
		case "streamha report", "streamha serve":
			c.ValidArgsFunction = completeRunDirs
		}
	}
	walk(root)
}

// completeStrategies offers registered strategies; after a comma, the
// list so far followed by each strategy not in it yet.
func completeStrategies(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	prefix, have := "", map[string]bool{}
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		prefix = toComplete[:i+1]
		for _, n := range strings.Split(toComplete[:i], ",") {
			have[n] = true
		}
	}
	var out []string
	if prefix == "" {
		out = append(out, "all\tevery strategy")
	}
	for _, n := range strategies.Names(false) {
		if !have[n] {
			out = append(out, prefix+n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeExamples offers the built-in example names and YAML files.
func completeExamples(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	out := exampleNames()
	matches, _ := filepath.Glob("*.yaml")
	out = append(out, matches...)
	return out, cobra.ShellCompDirectiveDefault
}

// completeExampleNames offers the built-in example names and "all".
func completeExampleNames(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return append(exampleNames(), "all"), cobra.ShellCompDirectiveNoFileComp
}

// completeLabs offers the lab numbers with their titles.
func completeLabs(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	var out []string
	for _, l := range labs.All() {
		out = append(out, fmt.Sprintf("%d\t%s", l.N, l.Title))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeRunDirs offers the run and sweep directories under streamha-out
// (those holding a result.json or a sweep's points); with none, the
// shell completes file names.
func completeRunDirs(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	var out []string
	entries, _ := os.ReadDir(outRoot)
	for _, e := range entries {
		p := filepath.Join(outRoot, e.Name())
		for _, f := range []string{"result.json", "points.jsonl"} {
			if _, err := os.Stat(filepath.Join(p, f)); err == nil {
				out = append(out, p)
				break
			}
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}
