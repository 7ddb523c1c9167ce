package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/docs"
)

func init() { extraCommands = append(extraCommands, newDocsCmd) }

func newDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "docs [TOPIC]",
		Short: "Read the documentation built into the binary: list its pages, or print one",
		Long: "docs lists the documentation pages built into the binary, or prints one as Markdown: the recovery\n" +
			"semantics and every metric (semantics), the experiment format (experiment), the strategies, the\n" +
			"reports, sweeps, the labs for teachers (teaching) and the rest, the same pages as the repository's\n" +
			"docs/ directory.",
		Example: "  streamha docs\n  streamha docs semantics\n  streamha docs global-checkpoint | less",
		Args:    cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, t := range docs.Topics() {
				names = append(names, t.Name+"\t"+t.Title)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				for _, t := range docs.Topics() {
					fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Title)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintln(out, "\nprint one with: streamha docs TOPIC")
				return nil
			}
			page, err := docs.Page(args[0])
			if err != nil {
				return usage("%w", err)
			}
			fmt.Fprint(out, page)
			return nil
		},
	}
}
