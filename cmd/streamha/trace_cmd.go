package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/streamha/streamha/ha/classify"
	"github.com/streamha/streamha/internal/cliflag"
)

func newTraceCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Work with the trace files streamha writes",
	}
	var out string
	export := &cobra.Command{
		Use:   "export TRACE [--out FILE]",
		Short: "Write a trace's sink deliveries as the output log 'streamha classify' and other tools read",
		Long: "export reads a trace streamha wrote (trace-<strategy>.jsonl, trace-reference.jsonl, a cluster\n" +
			"node's sink.trace.jsonl) and writes its sink's deliveries, in delivery order, as JSON Lines:\n" +
			"  {\"id\": \"k03|w=9s\", \"value\": 41.5, \"key\": \"k03\", \"n\": 812, \"t\": 9010.4}\n" +
			"('streamha docs classify'). 'streamha classify' also reads traces directly.",
		Example: "  streamha trace export streamha-out/latest/trace-amnesia.jsonl --out amnesia.jsonl",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := readOutputLog(args[0])
			if err != nil {
				return err
			}
			if log.trace == nil {
				return usage("%s is not a streamha trace (its lines have no \"kind\"); it can be classified as it is", args[0])
			}
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return usage("--out: %w", err)
				}
				defer f.Close()
				w = f
			}
			if err := writeOutputLog(w, log.outputs); err != nil {
				return fmt.Errorf("export %s: %w", args[0], err)
			}
			return nil
		},
	}
	cliflag.AddOut(export.Flags(), &out, cliflag.OutFile, "o", "write to FILE instead of standard output")
	c.AddCommand(export)
	return c
}

// exportedOutput is one line of an exported output log.
type exportedOutput struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value"`
	Key   string          `json:"key,omitempty"`
	N     *int64          `json:"n,omitempty"`
	T     *float64        `json:"t,omitempty"`
}

// writeOutputLog writes outputs in the JSON Lines form classify.ReadJSONL
// reads back to the same outputs.
func writeOutputLog(w io.Writer, outputs []classify.Output) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, o := range outputs {
		line := exportedOutput{ID: o.ID, Value: json.RawMessage(o.Value), Key: o.Key}
		if !json.Valid(line.Value) {
			// A value that is not JSON (NaN, ±Inf) is kept as its text.
			b, _ := json.Marshal(o.Value)
			line.Value = b
		}
		if o.HasN {
			line.N = &o.N
		}
		if o.HasT {
			line.T = &o.T
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
