package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/examples"
	"github.com/streamha/streamha/internal/cliflag"
)

func newExamplesCmd() *cobra.Command {
	var dir string
	var force bool
	c := &cobra.Command{
		Use:   "examples [NAME|all]",
		Short: "List the example experiments built into the binary, or write one (or all) out",
		Long: "examples lists the example experiment and sweep files built into the binary with a line on each.\n" +
			"Given a NAME (with or without .yaml) it writes that file into --dir, with the experiment a sweep\n" +
			"spec refers to; \"all\" writes every example. A file that exists with different content is kept\n" +
			"unless --force.",
		Example: "  streamha examples\n  streamha examples union && streamha run --config union.yaml\n" +
			"  streamha examples sweep-checkpoint && streamha sweep --spec sweep-checkpoint.yaml",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listExamples(cmd)
			}
			names, err := exampleFiles(args[0])
			if err != nil {
				return err
			}
			for _, n := range names {
				p, err := writeExample(dir, n, force)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", p)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", ".", "directory to write the example files into")
	cliflag.AddForce(c.Flags(), &force, "existing files whose content differs")
	return c
}

func listExamples(cmd *cobra.Command) error {
	entries, err := fs.ReadDir(examples.Files, ".")
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	for _, e := range entries {
		b, _ := fs.ReadFile(examples.Files, e.Name())
		fmt.Fprintf(tw, "%s\t%s\n", strings.TrimSuffix(e.Name(), ".yaml"), exampleSummary(b))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), "\nrun one with: streamha run --config NAME (a sweep: streamha sweep --spec NAME);\n"+
		"write one out to edit with: streamha examples NAME")
	return nil
}

// exampleSummary is the first sentence of a file's leading comment.
func exampleSummary(b []byte) string {
	var parts []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "#")
		if !ok {
			break
		}
		parts = append(parts, strings.TrimSpace(line))
	}
	text := strings.Join(parts, " ")
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i+1]
	}
	return text
}

// specExperiment finds a sweep spec's `experiment:` file.
var specExperiment = regexp.MustCompile(`(?m)^experiment:\s*(\S+)\s*$`)

// exampleFiles resolves a NAME argument to the files to write: the
// example itself and, for a sweep spec, the experiment it names.
func exampleFiles(arg string) ([]string, error) {
	if arg == "all" {
		entries, err := fs.ReadDir(examples.Files, ".")
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names, nil
	}
	name := strings.TrimSuffix(arg, ".yaml") + ".yaml"
	b, err := fs.ReadFile(examples.Files, name)
	if err != nil {
		var known []string
		entries, _ := fs.ReadDir(examples.Files, ".")
		for _, e := range entries {
			known = append(known, strings.TrimSuffix(e.Name(), ".yaml"))
		}
		return nil, usage("unknown example %q (examples: %s)", arg, strings.Join(known, ", "))
	}
	names := []string{name}
	if m := specExperiment.FindSubmatch(b); m != nil {
		names = append(names, string(m[1]))
	}
	return names, nil
}

// writeExample writes one embedded example into dir. A file with the same
// content is left as it is; one with different content is a usage error
// unless force.
func writeExample(dir, name string, force bool) (string, error) {
	b, err := fs.ReadFile(examples.Files, name)
	if err != nil {
		return "", fmt.Errorf("example %s: %w", name, err)
	}
	p := filepath.Join(dir, name)
	have, err := os.ReadFile(p)
	switch {
	case err == nil && !bytes.Equal(have, b) && !force:
		return "", usage("%s exists and differs from the example; pass --force to replace it, or --dir DIR", p)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", usage("%w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", usage("--dir: %w", err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	return p, nil
}
