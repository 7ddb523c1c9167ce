package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/ha/classify"
)

func newClassifyCmd() *cobra.Command {
	var expected, observed string
	var asJSON bool
	c := &cobra.Command{
		Use:   "classify --expected E.jsonl --observed O.jsonl",
		Short: "Classify the recovery seen in any output log (precise, rollback or gap)",
		Long: "classify compares an observed output log with the expected (failure-free) one and reports the\n" +
			"recovery type. Input: JSON Lines, one delivered output per line:\n" +
			"  {\"id\": string, \"value\": any JSON, \"key\": string (optional), \"n\": int (optional lineage count), \"t\": ms (optional)}\n" +
			"Exit status 0 whatever the type; 2 for unreadable input.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if expected == "" || observed == "" {
				return usage("both --expected and --observed are required")
			}
			exp, err := readLog(expected)
			if err != nil {
				return err
			}
			obs, err := readLog(observed)
			if err != nil {
				return err
			}
			res := classify.Classify(exp, obs, nil)
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			fmt.Fprintf(out, "recovery: %s\nmissing %d · duplicates %d · wrong %d · spurious %d · lost inputs %d\n",
				res.Label(), res.Missing, res.Duplicates, res.Wrong, res.Spurious, res.LostInputs)
			if res.ConvergedAt != nil {
				fmt.Fprintf(out, "converged at %g\n", *res.ConvergedAt)
			}
			for _, s := range res.Explanations {
				fmt.Fprintf(out, "  - %s\n", s)
			}
			return nil
		},
	}
	c.Flags().StringVar(&expected, "expected", "", "expected output log (JSON Lines)")
	c.Flags().StringVar(&observed, "observed", "", "observed output log (JSON Lines)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return c
}

func readLog(path string) ([]classify.Output, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usage("%w", err)
	}
	defer f.Close()
	out, err := classify.ReadJSONL(f, path)
	if err != nil {
		return nil, usage("%w", err)
	}
	return out, nil
}
