// Package reports renders results: terminal tables, result files (JSON,
// CSV), Markdown and self-contained HTML reports, and plots.
package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/streamha/streamha/ha/metrics"
)

// hasProcessCPU reports whether the runs carry process CPU ratios (real
// runs): the tables then add a "proc cpu×" column.
func hasProcessCPU(r *metrics.Result) bool {
	for _, run := range r.Runs {
		if run.Overhead.ProcessCPURatio != nil {
			return true
		}
	}
	return false
}

// Table writes the comparison table: RunTable's columns but those only
// the files hold, one row per strategy.
func Table(w io.Writer, r *metrics.Result) error {
	fmt.Fprintf(w, "experiment %s · seed %d · mode %s · query class %s\n", r.Experiment, r.Seed, r.Mode, r.QueryClass)
	if len(r.Faults) > 0 {
		fmt.Fprintf(w, "faults: %s\n", strings.Join(r.Faults, "; "))
	}
	fmt.Fprintln(w)
	t := runTable(r, true)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(t.head, "\t")+"\t")
	for _, row := range t.rows {
		for _, c := range row {
			fmt.Fprint(tw, c.text, "\t")
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n := RoundsNote(r); n != "" {
		fmt.Fprintf(w, "\n%s\n", n)
	}
	if n := InputsNote(r); n != "" {
		fmt.Fprintf(w, "\n%s\n", n)
	}
	return nil
}

// InputsNote says how many source tuples reach no output even in the
// failure-free run (filtered out, or without a join partner), which are
// never counted as lost; "" when all of them do or it is not known.
func InputsNote(r *metrics.Result) string {
	for _, run := range r.Runs {
		if rec := run.Recovery; rec.Emitted > 0 && rec.UnmatchedInputs > 0 {
			return fmt.Sprintf("%d of the %d source tuples emitted reach no output even without a failure (filtered out, or no join partner); they never count as lost.",
				rec.UnmatchedInputs, rec.Emitted)
		}
	}
	return ""
}

// RecoveryLabel is "precise", "gap" or "rollback/repeating".
func RecoveryLabel(r metrics.Recovery) string { return r.Label() }

// Explanations writes each run's anomaly sentences, at most limit per run (0 = all).
func Explanations(w io.Writer, r *metrics.Result, limit int) {
	for _, run := range r.Runs {
		ex := run.Recovery.Explanations
		if len(ex) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s):\n", run.Strategy, RecoveryLabel(run.Recovery))
		for i, s := range ex {
			if limit > 0 && i == limit {
				fmt.Fprintf(w, "  … %d more sentences in result.json; every anomaly is listed in %s ('streamha why ID' explains one)\n", len(ex)-limit, AnomaliesFile(run.Strategy))
				break
			}
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
}
