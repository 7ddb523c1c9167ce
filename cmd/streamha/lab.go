package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/labs"
)

func newLabCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "lab",
		Short: "Teaching labs: list them, show a handout, check your answers",
		Long: "lab lists the teaching labs, prints a lab's handout, and checks a lab's answers: the check reruns\n" +
			"the lab's experiments in the simulator (deterministically, with the lab's files and seeds) and\n" +
			"says per question whether the answer is right and why, with the evidence it computed.\n" +
			"Exit status of check: 0 all right, 1 some wrong, 2 usage errors. See docs/teaching.md.",
		Example: "  streamha lab list\n  streamha lab show 1\n  streamha lab check 1 --answers my-answers.yaml",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the labs",
		Args:  wrapArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			for _, l := range labs.All() {
				fmt.Fprintf(tw, "%d\t%s\tlabs/%s\t%s\n", l.N, l.Title, l.Dir, l.Summary)
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show N",
		Short: "Print lab N's handout",
		Args:  wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := labs.Lookup(args[0])
			if err != nil {
				return usageErr{err}
			}
			fmt.Fprint(cmd.OutOrStdout(), l.Handout())
			return nil
		},
	}
	var answers string
	check := &cobra.Command{
		Use:   "check N [--answers FILE]",
		Short: "Check lab N's answers (default FILE: labs/NN-*/answers.yaml)",
		Args:  wrapArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := labs.Lookup(args[0])
			if err != nil {
				return usageErr{err}
			}
			path := answers
			if path == "" {
				path = filepath.Join("labs", l.Dir, "answers.yaml")
			}
			a, err := labs.ReadAnswers(l, path)
			if err != nil {
				return usageErr{err}
			}
			cluster := false
			for _, sub := range cmd.Root().Commands() {
				cluster = cluster || sub.Name() == "cluster"
			}
			res, err := l.Check(a, labs.Options{ClusterAvailable: cluster})
			if err != nil {
				if errors.Is(err, labs.ErrUsage) {
					return usageErr{err}
				}
				return err
			}
			res.Write(cmd.OutOrStdout())
			if !res.AllRight() {
				return errLabWrong
			}
			return nil
		},
	}
	check.Flags().StringVar(&answers, "answers", "", "answers YAML file, one key per question (q1: ..., q2: ...)")
	c.AddCommand(list, show, check)
	return c
}

// errLabWrong makes `lab check` exit 1 after printing its verdicts.
var errLabWrong = errors.New("some answers are wrong or a requirement failed (see above)")
