package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/ha"
	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/ha/metrics"
	"github.com/streamha/streamha/internal/cliflag"
	"github.com/streamha/streamha/internal/safefile"
	"github.com/streamha/streamha/reports"
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
			"or a trace streamha wrote (trace-<strategy>.jsonl, trace-reference.jsonl, a cluster node's\n" +
			"sink.trace.jsonl): its sink deliveries are the output log. Given two traces of a run, the result\n" +
			"is the run's own (explanations name the crash, detection and replay; lost inputs as in result.json).\n" +
			"Exit status 0 whatever the type; 2 for unreadable input.",
		Example: "  streamha classify --expected e.jsonl --observed o.jsonl\n" +
			"  streamha classify --expected streamha-out/latest/trace-reference.jsonl --observed streamha-out/latest/trace-amnesia.jsonl",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if expected == "" || observed == "" {
				return usage("both --expected and --observed are required")
			}
			exp, err := readOutputLog(expected)
			if err != nil {
				return err
			}
			obs, err := readOutputLog(observed)
			if err != nil {
				return err
			}
			res := classifyLogs(exp, obs)
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
	c.Flags().StringVar(&expected, "expected", "", "expected output log (JSON Lines, or a streamha trace)")
	c.Flags().StringVar(&observed, "observed", "", "observed output log (JSON Lines, or a streamha trace)")
	cliflag.AddJSON(c.Flags(), &asJSON, "the result")
	return c
}

// outputLog is one input of classify: an output log, and the trace it
// came from when it is a streamha trace.
type outputLog struct {
	outputs []classify.Output
	trace   *ha.Trace
}

// classifyLogs classifies obs against exp. Two traces are classified as
// 'streamha run' does, so the figures match the run's result.json.
func classifyLogs(exp, obs outputLog) classify.Result {
	if exp.trace != nil && obs.trace != nil {
		rec, res := metrics.ClassifyRecovery(exp.trace, obs.trace)
		res.LostInputs = rec.LostInputs
		return res
	}
	return classify.Classify(exp.outputs, obs.outputs, nil)
}

// readOutputLog reads a classify input, telling a streamha trace (lines
// with a "kind") from an output log by its first non-blank line.
func readOutputLog(path string) (outputLog, error) {
	isTrace, err := isTraceFile(path)
	if err != nil {
		return outputLog{}, usage("%w", err)
	}
	if !isTrace {
		out, err := readLog(path)
		return outputLog{outputs: out}, err
	}
	tr, err := reports.ReadTrace(path)
	if err != nil {
		return outputLog{}, usage("%s: %w", path, err)
	}
	return outputLog{outputs: metrics.Outputs(tr.Deliveries()), trace: tr}, nil
}

// isTraceFile reports whether the first non-blank line of path is a trace
// event ({"t":…, "kind":…}) rather than an output ({"id":…}).
func isTraceFile(path string) (bool, error) {
	f, err := safefile.Open(path, safefile.MaxTraceFile)
	if err != nil {
		return false, err
	}
	defer f.Close()
	// The first line is read up to classify.MaxLineBytes and no further.
	br := bufio.NewReader(io.LimitReader(f, classify.MaxLineBytes))
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var fields map[string]json.RawMessage
			if json.Unmarshal(t, &fields) != nil {
				return false, nil // readLog names the line and the problem
			}
			_, kind := fields["kind"]
			_, id := fields["id"]
			return kind && !id, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
	}
}

func readLog(path string) ([]classify.Output, error) {
	f, err := safefile.Open(path, safefile.MaxTraceFile)
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
