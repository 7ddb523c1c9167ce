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

// Table writes the comparison table: one row per strategy (real runs add
// the process CPU ratio after cpu×, the node loops' busy-time ratio).
func Table(w io.Writer, r *metrics.Result) error {
	fmt.Fprintf(w, "experiment %s · seed %d · mode %s · query class %s\n", r.Experiment, r.Seed, r.Mode, r.QueryClass)
	if len(r.Faults) > 0 {
		fmt.Fprintf(w, "faults: %s\n", strings.Join(r.Faults, "; "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	proc := hasProcessCPU(r)
	cpuHead := "cpu×"
	if proc {
		cpuHead = "cpu×\tproc cpu×"
	}
	fmt.Fprintln(tw, "strategy\trecovery\tmissing\tdup\twrong\tlost in\tdetect ms\trecovery ms\t+latency ms\tunavail ms\t"+cpuHead+"\tbytes×\tmsgs×\tpeak queue\t")
	for _, run := range r.Runs {
		rec, o := run.Recovery, run.Overhead
		cpu := optRatio(o.CPURatio)
		if proc {
			cpu += "\t" + optRatio(o.ProcessCPURatio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%.1f\t%.1f\t%s\t%s\t%s\t%d\t\n",
			run.Strategy, RecoveryLabel(rec), rec.Missing, rec.Duplicates, rec.Wrong, rec.LostInputs,
			optMs(rec.DetectionMs), optMs(rec.RecoveryMs), rec.MaxAddedLatencyMs, rec.UnavailableMs,
			cpu, optRatio(o.BytesRatio), optRatio(o.MessagesRatio), o.PeakQueue)
	}
	return tw.Flush()
}

// RecoveryLabel is "precise", "gap" or "rollback/repeating".
func RecoveryLabel(r metrics.Recovery) string { return r.Label() }

func optMs(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *p)
}

func optRatio(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *p)
}

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
				fmt.Fprintf(w, "  … %d more in result.json\n", len(ex)-limit)
				break
			}
			fmt.Fprintf(w, "  - %s\n", s)
		}
	}
}
