package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/ha/ops"
)

func init() { extraCommands = append(extraCommands, newOperatorsCmd) }

func newOperatorsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "operators",
		Short: "List the operators an experiment's nodes can use, with their class and parameters",
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			for _, d := range ops.Docs() {
				fmt.Fprintf(out, "%s (%s)\n  %s\n", d.Name, d.Class, d.Doc)
				if len(d.Params) == 0 {
					fmt.Fprintln(out, "  (no parameters)")
				}
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				for _, p := range d.Params {
					def := p.Default
					if def == "" {
						def = "no default"
					} else {
						def = "default " + def
					}
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, p.Type, def, p.Doc)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintln(out)
			}
			return nil
		},
	}
}
