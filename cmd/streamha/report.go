package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/reports"
	"github.com/streamha/streamha/sweep"
)

func newReportCmd() *cobra.Command {
	var quiet bool
	c := &cobra.Command{
		Use:   "report DIR...",
		Short: "Re-render the plots and reports of saved run or sweep directories; merge sweep shards",
		Long: "report re-renders report.md, report.html, results.csv, results.json and the plots of each DIR from\n" +
			"its saved results: result.json and the traces of a 'streamha run' directory, or sweep.json and\n" +
			"points.jsonl of a 'streamha sweep' directory. 'report merge' joins the shards of one sweep.\n" +
			"Re-rendering a run directory that takes longer than 2 s reports each stage on stderr (--quiet: never).",
		Example: "  streamha report streamha-out/latest\n  streamha report merge --out sweep sweep-shard-0 sweep-shard-1",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, dir := range args {
				var progress func(string)
				if !quiet {
					progress = stageReporter(cmd.ErrOrStderr(), runProgressAfter)
				}
				if err := renderDir(cmd.OutOrStdout(), dir, progress); err != nil {
					return err
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&quiet, "quiet", false, "no progress messages on stderr")
	c.AddCommand(newReportMergeCmd())
	return c
}

// renderDir re-renders one saved run or sweep directory; progress, when
// not nil, is told the stages of a run directory's.
func renderDir(out io.Writer, dir string, progress func(string)) error {
	switch {
	case reports.IsSweepDir(dir):
		return renderSweep(out, dir)
	case reports.IsRunDir(dir):
		if err := renderRunDir(dir, progress); err != nil {
			return err
		}
		fmt.Fprintf(out, "report written to %s\n", filepath.Join(dir, "report.html"))
		return nil
	}
	return usage("%s: neither a run directory (result.json) nor a sweep directory (sweep.json)", dir)
}

// renderRunDir re-renders a saved run directory's report; an unreadable
// result or trace is a usage error.
func renderRunDir(dir string, progress func(string)) error {
	err := reports.RenderRunDir(dir, progress)
	if re := (*reports.ReadError)(nil); errors.As(err, &re) {
		return usage("%s: %w", dir, re.Err)
	}
	return err
}

func newReportMergeCmd() *cobra.Command {
	var out string
	var noReport bool
	c := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Join the shard directories of one sweep into one and render it",
		Long: "merge checks that the directories hold the same sweep (the spec hash in sweep.json), takes the union\n" +
			"of their points.jsonl (sorted by point index) into --out, and renders the plots and reports.\n" +
			"Points missing from every shard are reported; the report says the sweep is incomplete.",
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.MinimumNArgs(1)(cmd, args); err != nil {
				return usageErr{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usage("merge: --out is required")
			}
			w := cmd.OutOrStdout()
			_, ps, missing, err := sweep.Merge(out, args)
			if err != nil {
				return usage("%w", err)
			}
			fmt.Fprintf(w, "merged %d points from %d directories into %s", len(ps), len(args), out)
			if missing > 0 {
				fmt.Fprintf(w, " (%d points still missing)", missing)
			}
			fmt.Fprintln(w)
			if noReport {
				return nil
			}
			return renderSweep(w, out)
		},
	}
	cliflag.AddOut(c.Flags(), &out, cliflag.OutDir, "", "directory for the merged sweep (required)")
	c.Flags().BoolVar(&noReport, "no-report", false, "merge points only, no plots or reports")
	return c
}
