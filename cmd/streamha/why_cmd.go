package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/why"
)

func init() { extraCommands = append(extraCommands, newWhyCmd) }

func newWhyCmd() *cobra.Command {
	var (
		runDir, strategy              string
		asJSON, missing, wrong, dupFl bool
	)
	c := &cobra.Command{
		Use:   "why [OUTPUT-ID] [--run DIR] [--strategy S] [--json] [--missing|--first-wrong|--first-duplicate]",
		Short: "Tell the causal story of one output: its source tuples, every hop, every filter decision",
		Long: "why explains one output id of a simulated run: the source tuples its lineage holds, every emit of it\n" +
			"(host, role, epoch, seq) and what the next stage did with that copy (accepted, dropped as a duplicate\n" +
			"seq — dup_dropped —, fenced as coming from a stale epoch, lost in an input gap, delivered), the\n" +
			"crashes, detections, takeovers, restores and replays on its path, and how it differs from the same id\n" +
			"in the failure-free run. It reruns the experiment the run directory's result.json records (a simulated\n" +
			"run is a pure function of its experiment and seed) with every emit traced, and refuses when the rerun\n" +
			"does not classify as recorded. --missing, --first-wrong and --first-duplicate start from the first\n" +
			"anomaly of that kind. Without --strategy it explains the run's only strategy, or the only one that did\n" +
			"not recover precisely. See 'streamha docs why'.",
		Example: "  streamha run --strategy amnesia,passive-standby --out run1\n" +
			"  streamha why 'k00|w=10s' --run run1\n" +
			"  streamha why --first-wrong --run run1 --strategy amnesia --json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			picks := 0
			for _, b := range []bool{missing, wrong, dupFl} {
				if b {
					picks++
				}
			}
			switch {
			case len(args) == 1 && picks > 0:
				return usage("give an OUTPUT-ID or one of --missing, --first-wrong, --first-duplicate, not both")
			case len(args) == 0 && picks != 1:
				return usage("give an OUTPUT-ID (e.g. 'k06|w=3s') or exactly one of --missing, --first-wrong, --first-duplicate")
			}
			dir := runDir
			if dir == "" {
				dir = filepath.Join(outRoot, "latest")
			}
			r, err := why.Load(dir, strategy)
			if err != nil {
				return whyErr(err)
			}
			if r.Picked != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "streamha why:", r.Picked)
			}
			var id string
			switch {
			case len(args) == 1:
				id = args[0]
			case missing:
				id, err = r.FirstMissing()
			case wrong:
				id, err = r.FirstWrong()
			default:
				id, err = r.FirstDuplicate()
			}
			if err != nil {
				return whyErr(err)
			}
			st, err := r.Story(id)
			if err != nil {
				return whyErr(err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			st.Write(cmd.OutOrStdout())
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&runDir, "run", "", "the run directory 'streamha run --out DIR' wrote (default streamha-out/latest)")
	cliflag.AddStrategy(f, &strategy, "the strategy whose run to explain (default: the run's only strategy, else the only one that did not recover precisely)")
	cliflag.AddJSON(f, &asJSON, "the story")
	f.BoolVar(&missing, "missing", false, "explain the first expected output that was never delivered")
	f.BoolVar(&wrong, "first-wrong", false, "explain the first output delivered with a wrong value or lineage")
	f.BoolVar(&dupFl, "first-duplicate", false, "explain the first output delivered twice")
	return c
}

func whyErr(err error) error {
	if errors.Is(err, why.ErrUsage) {
		return usageErr{err}
	}
	return err
}
