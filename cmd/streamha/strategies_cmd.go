package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/strategies"
)

func newStrategiesCmd() *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "strategies",
		Short: "List the registered HA strategies and their parameters",
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			for _, name := range strategies.Names(all) {
				info, _ := strategies.Lookup(name)
				fmt.Fprintf(out, "%s\n  %s\n", name, info.Doc)
				if len(info.Params) == 0 {
					fmt.Fprintln(out, "  (no parameters)")
				} else {
					tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
					for _, p := range info.Params {
						fmt.Fprintf(tw, "  %s\t%s\tdefault %s\t%s\n", p.Name, p.Type, p.Default, p.Doc)
					}
					tw.Flush()
				}
				fmt.Fprintln(out)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&all, "all", false, "include hidden strategies (the no-HA baseline \"none\")")
	return c
}
